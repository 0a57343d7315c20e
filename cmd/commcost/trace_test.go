package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/commcost/commcost/model"
	"github.com/commcost/commcost/trace"
)

// writeTrace writes a trace directory of p ranks whose rank 0 sends one
// message to rank 1 and rank 1 receives it unless unmatched; ranks in skip
// get no file.
func writeTrace(t *testing.T, dir string, p int, unmatched bool, skip ...int) {
	t.Helper()
	recv := int64(64)
	if unmatched {
		recv = 0
	}
	writeTraceRecv(t, dir, p, recv, skip...)
}

// writeTraceRecv is writeTrace with rank 1's receive of recv bytes (the
// send is 64), none for 0.
func writeTraceRecv(t *testing.T, dir string, p int, recv int64, skip ...int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < p; r++ {
		if containsInt(skip, r) {
			continue
		}
		var b bytes.Buffer
		w := trace.NewWriter(&b, trace.Header{Rank: r, Size: p, Host: "h", EagerShmBytes: 4096, EagerNetBytes: -1})
		switch {
		case r == 0:
			w.Write(trace.Event{Op: trace.OpSend, Peer: 1, Tag: 4, Peer2: trace.PeerNone, Bytes: 64, T0: 1000, T1: 2000})
		case r == 1 && recv > 0:
			w.Write(trace.Event{Op: trace.OpRecv, Peer: 0, Tag: 4, Peer2: trace.PeerNone, Bytes: recv, Bytes2: recv, T0: 1000, T1: 3000}) // a buffer of the size received
		}
		w.Write(trace.Event{Op: trace.OpFinalize, Peer: trace.PeerNone, Peer2: trace.PeerNone, T0: 5000, T1: 5000})
		if err := w.Close(5000); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, trace.RankFile(r)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeTraceWith writes a trace directory of p ranks whose rank r makes
// calls(r) (times from 1000 ns on), then MPI_Finalize.
func writeTraceWith(t *testing.T, dir string, p int, calls func(r int) []trace.Event) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < p; r++ {
		var b bytes.Buffer
		w := trace.NewWriter(&b, trace.Header{Rank: r, Size: p, Host: "h", EagerShmBytes: 4096, EagerNetBytes: -1})
		for k, e := range calls(r) {
			e.T0, e.T1 = int64(1000+100*k), int64(1050+100*k)
			w.Write(e)
		}
		w.Write(trace.Event{Op: trace.OpFinalize, Peer: trace.PeerNone, Peer2: trace.PeerNone, T0: 5000, T1: 5000})
		if err := w.Close(5000); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, trace.RankFile(r)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func writeModelJSON(t *testing.T, path string, m model.Model) {
	t.Helper()
	data, err := model.Marshal(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTraceReplayBadInput: every bad input of trace, trace summary, replay
// and export is one message naming what is wrong (the file, the rank and
// the event for a trace), exit status 2, and nothing written.
func TestTraceReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeTrace(t, good, 3, false)
	unmatched := filepath.Join(dir, "unmatched")
	writeTrace(t, unmatched, 2, true)
	small := filepath.Join(dir, "small")
	writeTraceRecv(t, small, 2, 8)
	truncate := "DIR " + small + ": " + filepath.Join(small, trace.RankFile(1)) + ": offset 464 (event 5): Recv of 8 bytes from rank 0 (tag 4) matches the Send of 64 bytes at " +
		filepath.Join(small, trace.RankFile(0)) + ": offset 464 (event 5): a receive holds at least the bytes of its matched send (a real run fails with MPI_ERR_TRUNCATE)"
	missing := filepath.Join(dir, "missing")
	writeTrace(t, missing, 3, false, 1)
	// rank 1 receives rank 0's 64 bytes by recv(r): events the library
	// never writes
	pair := func(name string, send []trace.Event, recv trace.Event) string {
		d := filepath.Join(dir, name)
		writeTraceWith(t, d, 2, func(r int) []trace.Event {
			if r == 0 {
				return send
			}
			return []trace.Event{recv}
		})
		return d
	}
	isend := trace.Event{Op: trace.OpIsend, Peer: 1, Tag: 4, Peer2: trace.PeerNone, Bytes: 64, Req: 7}
	recv := trace.Event{Op: trace.OpRecv, Peer: 0, Tag: 4, Peer2: trace.PeerNone, Bytes: 64, Bytes2: 64}
	done := trace.Event{Op: trace.OpComplete, Flags: trace.FlagLocalPeer, Peer: trace.PeerNone, Peer2: trace.PeerNone, Req: 7}
	send := trace.Event{Op: trace.OpSend, Peer: 1, Tag: 4, Peer2: trace.PeerNone, Bytes: 64}
	anySrc := pair("anysrc", []trace.Event{send}, trace.Event{Op: trace.OpRecv, Flags: trace.FlagAnySource, Peer: trace.PeerAny, Tag: 4, Peer2: trace.PeerNone, Bytes: 64, Bytes2: 64})
	anySrcWhy := "DIR " + anySrc + ": " + filepath.Join(anySrc, trace.RankFile(1)) + ": offset 464 (event 5): Recv completed from MPI_ANY_SOURCE (-2, peer, the field at offset 8): a completed receive records its status's actual source"
	waitHandle := pair("waithandle", []trace.Event{isend, {Op: trace.OpWait, Peer: trace.PeerNone, Peer2: trace.PeerNone, Req: 7}, done}, recv)
	waitHandleWhy := "DIR " + waitHandle + ": " + filepath.Join(waitHandle, trace.RankFile(0)) + ": offset 528 (event 6): Wait with req 7 and tag 0 (the fields at offsets 40 and 12): req counts the requests it completed; the library records 1, or 0 on MPI_REQUEST_NULL"
	// a calibration run directory measured with --backend local
	calLocal := filepath.Join(dir, "cal-local")
	if err := os.MkdirAll(calLocal, 0o755); err != nil {
		t.Fatal(err)
	}
	calRecs, err := os.ReadFile(filepath.Join("..", "..", "replay", "testdata", "negloggp", "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(calLocal, "records.jsonl"), bytes.ReplaceAll(calRecs, []byte(`"backend":"native"`), []byte(`"backend":"local"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	// a model fitted to them by fit --format json, which records their
	// backend; predict reads it (goroutine ranks predicted by a model of
	// goroutine ranks), replay and export simgrid refuse it
	code, fitOut, errs := runCLI(t, "fit", "hockney", filepath.Join(calLocal, "records.jsonl"), "--format", "json")
	if code != 0 {
		t.Fatalf("fit of the local records: exit %d: %s", code, errs)
	}
	hockLocal := filepath.Join(dir, "hockney-local.json")
	if err := os.WriteFile(hockLocal, []byte(fitOut), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "predict", hockLocal, "pingpong", "bytes=64"); code != 0 {
		t.Fatalf("predict with a fit of local records: exit %d: %s", code, errs)
	}
	// the same fit labelled with a backend that times no network message
	hockNone := filepath.Join(dir, "hockney-none.json")
	if err := os.WriteFile(hockNone, bytes.Replace([]byte(fitOut), []byte(`"backend": "local"`), []byte(`"backend": "none"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	localModel := hockLocal + ": it was fitted to records measured with --backend local (goroutine ranks in one process, not a network); a traced MPI program is predicted from a model fitted to records measured under mpirun"
	strayDone := pair("straydone", []trace.Event{send, {Op: trace.OpWait, Peer: trace.PeerNone, Peer2: trace.PeerNone}, done}, recv)
	strayDoneWhy := "DIR " + strayDone + ": " + filepath.Join(strayDone, trace.RankFile(0)) + ": offset 592 (event 7): a completion of request 0x7 where no Wait or Test call completed one more"
	torn := filepath.Join(dir, "torn")
	writeTrace(t, torn, 2, false)
	data, _ := os.ReadFile(filepath.Join(torn, trace.RankFile(1)))
	os.WriteFile(filepath.Join(torn, trace.RankFile(1)), data[:len(data)-100], 0o644)
	newer := filepath.Join(dir, "newer")
	writeTrace(t, newer, 2, false)
	data, _ = os.ReadFile(filepath.Join(newer, trace.RankFile(0)))
	binary.LittleEndian.PutUint16(data[8:], trace.Version+1)
	os.WriteFile(filepath.Join(newer, trace.RankFile(0)), data, 0o644)
	hock := filepath.Join(dir, "hockney.json")
	writeHockney(t, hock)
	hockLink := filepath.Join(dir, "hockney-link.json")
	if err := os.Symlink(hock, hockLink); err != nil {
		t.Fatal(err)
	}
	neg := filepath.Join(dir, "negative.json")
	writeModelJSON(t, neg, &model.Hockney{Ts: model.Param{Name: "t_s", Value: -1e-6}, Tw: model.Param{Name: "t_w", Value: 1e-9}})
	tri := filepath.Join(dir, "trilinear.json")
	writeModelJSON(t, tri, &model.Trilinear{})
	logpNeg := filepath.Join(dir, "logp.json")
	writeModelJSON(t, logpNeg, &model.LogP{L: model.Param{Name: "L", Unit: "s", Value: -1.5e-5}, O: model.Param{Name: "o", Unit: "s", Value: 2e-5}, G: model.Param{Name: "g", Unit: "s", Value: 1e-6}, PacketBytes: 4096})
	notLib := filepath.Join(dir, "notalib.so")
	os.WriteFile(notLib, []byte("not a shared object"), 0o644)
	out := filepath.Join(dir, "out")
	fifoPNG := filepath.Join(dir, "heat.png")
	if err := syscall.Mkfifo(fifoPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	// programs files of replay assess, each refused whole before a
	// replay runs or anything is printed
	programs := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good2 := filepath.Join(dir, "good2")
	writeTrace(t, good2, 3, false)
	progTwice := programs("twice.tsv", "ring\t"+good+"\t1.5\t-\nring\t"+good2+"\t1.5\t-\n")
	progDirTwice := programs("dirtwice.tsv", "ring\t"+good+"\t1.5\t-\nring2\t"+good+"/\t1.5\t-\n")
	progHuge := programs("huge.tsv", "ring\t"+good+"\t1e308\t-\n")
	progTiny := programs("tiny.tsv", "# a comment\nring\t"+good+"\t-\t1e-300\n")
	progNaN := programs("nan.tsv", "ring\t"+good+"\tNaN\t-\n")
	progInf := programs("inf.tsv", "ring\t"+good+"\t1.5\t+Inf\n")
	progEmptyDir := programs("nodir.tsv", "ring\t\t1.5\t-\n")
	progNone := programs("none.tsv", "# nothing\n\n")
	// a bad time after a good line: refused before the first replays
	progOK := programs("ok.tsv", "ring\t"+good+"\t1.5\t-\n")
	progLate := programs("late.tsv", "ring\t"+good+"\t1.5\t-\nstar\t"+good2+"\t-1\t-\n")

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"trace no program", []string{"trace", "--out", out}, "no program to trace"},
		{"trace out a file", []string{"trace", "--out", hock, "--lib", notLib, "--", "true"}, "--out " + hock + ": " + hock + " is a regular file; --out names a directory (new or existing) for the trace files"},
		{"trace out on devtmpfs", []string{"trace", "--out", "/dev/trx", "--lib", notLib, "--", "true"}, "--out /dev/trx: /dev/trx is on the kernel's devtmpfs filesystem, not a place for data; --out names a directory (new or existing) for the trace files"},
		{"trace out on proc", []string{"trace", "--out", "/proc/self", "--lib", notLib, "--", "true"}, "--out /proc/self: /proc/self is on the kernel's proc filesystem, not a place for data"},
		{"trace no such program", []string{"trace", "--out", out, "--lib", notLib, "--", "./no-such-program"}, "./no-such-program: no such program"},
		{"trace no library", []string{"trace", "--out", out, "--lib", filepath.Join(dir, "none.so"), "--", "true"}, "--lib " + filepath.Join(dir, "none.so")},
		{"trace library not a shared object", []string{"trace", "--out", out, "--lib", notLib, "--", "true"}, "--lib " + notLib + ": " + notLib + " is not an ELF shared library"},
		{"summary no dir", []string{"trace", "summary", filepath.Join(dir, "none")}, "none"},
		{"summary rank missing", []string{"trace", "summary", missing}, "rank-1.cct: rank 1 of 3 is missing"},
		{"summary torn", []string{"trace", "summary", torn}, "rank-1.cct: offset"},
		{"summary newer", []string{"trace", "summary", newer}, fmt.Sprintf("version %d is newer", trace.Version+1)},
		{"summary bad heatmap", []string{"trace", "summary", good, "--heatmap", filepath.Join(dir, "h.txt")}, "--heatmap"},
		{"replay no model", []string{"replay", good}, "no model"},
		{"replay model missing", []string{"replay", good, "--model", filepath.Join(dir, "nomodel.json")}, "nomodel.json"},
		{"replay no point-to-point", []string{"replay", good, "--model", tri}, "prices no point-to-point message"},
		{"replay negative model", []string{"replay", good, "--model", neg}, "negative time"},
		{"replay logp of a negative latency", []string{"replay", good, "--model", logpNeg}, "--model " + logpNeg + ": model JSON: logp: L = -1.5e-05 s is negative: a fit that prices messages in negative time cannot be used"},
		{"replay bad scale", []string{"replay", good, "--model", hock, "--scale", "bandwidth"}, "--scale bandwidth"},
		{"assess program twice", []string{"replay", "assess", "--model", hock, "--programs", progTwice}, "--programs " + progTwice + ":2: program \"ring\" is listed again (first at line 1); list each program once"},
		{"assess trace directory twice", []string{"replay", "assess", "--model", hock, "--programs", progDirTwice}, "--programs " + progDirTwice + ":2: trace directory \"" + good + "/\" is listed again (first at line 1)"},
		{"assess SimGrid time of 1e308 s", []string{"replay", "assess", "--model", hock, "--programs", progHuge}, "--programs " + progHuge + ":1: SimGrid calibrated time \"1e308\": want seconds from 1e-12 to 1e+09, or -"},
		{"assess SimGrid time of 1e-300 s", []string{"replay", "assess", "--model", hock, "--programs", progTiny}, "--programs " + progTiny + ":2: SimGrid default time \"1e-300\": want seconds from 1e-12 to 1e+09, or -"},
		{"assess SimGrid time NaN", []string{"replay", "assess", "--model", hock, "--programs", progNaN}, "--programs " + progNaN + ":1: SimGrid calibrated time \"NaN\""},
		{"assess SimGrid time infinite", []string{"replay", "assess", "--model", hock, "--programs", progInf}, "--programs " + progInf + ":1: SimGrid default time \"+Inf\""},
		{"assess program without a trace directory", []string{"replay", "assess", "--model", hock, "--programs", progEmptyDir}, "--programs " + progEmptyDir + ":1: an empty name or trace directory"},
		{"assess no program", []string{"replay", "assess", "--model", hock, "--programs", progNone}, "--programs " + progNone + " lists no program"},
		{"assess bad line after a good one", []string{"replay", "assess", "--model", hock, "--programs", progLate}, "--programs " + progLate + ":2: SimGrid calibrated time \"-1\""},
		{"replay calibration of the local backend", []string{"replay", good, "--calibration", calLocal}, "--calibration " + calLocal + ": 30 of its 30 records were measured with --backend local (goroutine ranks in one process, not a network); a traced MPI program is predicted from a calibration measured under mpirun"},
		{"replay model of the local backend", []string{"replay", good, "--model", hock, "--model", hockLocal}, "--model " + localModel},
		{"replay model of backend none", []string{"replay", good, "--model", hockNone}, "--model " + hockNone + `: it was fitted to records of backend "none", which times no MPI message on a network`},
		// not left out with a note, as a fit replay cannot price with is
		{"assess model of the local backend", []string{"replay", "assess", "--model", hock, "--model", hockLocal, "--programs", progOK}, "--model " + localModel},
		{"replay calibration a file", []string{"replay", good, "--calibration", hock}, "--calibration " + hock + ": " + hock + " is not a directory (want a run directory holding records.jsonl)"},
		// A model or a what-if given twice would be priced twice (or the
		// second factor would silently win).
		{"replay model twice", []string{"replay", good, "--model", hock, "--model", hock}, "--model " + hock + ": is given twice; give each model once"},
		{"replay model through a link", []string{"replay", good, "--model", hock, "--model", hockLink}, "--model " + hockLink + ": is the same file as " + hock + "; give each model once"},
		{"replay scale twice", []string{"replay", good, "--model", hock, "--scale", "t_s=2", "--scale", "t_s=3"}, "--scale t_s=3: t_s is scaled twice; give each parameter once"},
		{"replay scale by latency and t_s", []string{"replay", good, "--model", hock, "--scale", "latency=2", "--scale", "t_s=2"}, "--scale t_s=2: latency already scales the hockney model's t_s; give latency=FACTOR or t_s=FACTOR, not both"},
		{"replay scale by bandwidth and t_w", []string{"replay", good, "--model", hock, "--scale", "t_w=0.5", "--scale", "bandwidth=2"}, "t_w=0.5: bandwidth already scales the hockney model's t_w; give bandwidth=FACTOR or t_w=FACTOR, not both"},
		{"replay scale beyond a millionfold", []string{"replay", good, "--model", hock, "--scale", "bandwidth=1e-308"}, "--scale bandwidth=1e-308: a factor of 1e-308: want 1e-06 to 1e+06"},
		{"summary heatmap a FIFO", []string{"trace", "summary", good, "--heatmap", fifoPNG}, "--heatmap " + fifoPNG + ": is a named pipe (FIFO), not a regular file"},
		{"replay unknown scale", []string{"replay", good, "--model", hock, "--scale", "G=2"}, "--scale G=2: G: the hockney model has no parameter \"G\""},
		{"replay bad eager", []string{"replay", good, "--model", hock, "--eager", "lots"}, "--eager lots"},
		{"replay unmatched", []string{"replay", unmatched, "--model", hock}, "DIR " + unmatched + ": " + unmatched + "/rank-0.cct: rank 0, event 5: Send of 64 bytes to rank 1 (tag 4, point-to-point) has no matching receive"},
		{"replay receive smaller than its send", []string{"replay", small, "--model", hock}, truncate},
		{"export tit receive smaller than its send", []string{"export", "tit", small}, truncate},
		{"replay receive completed from MPI_ANY_SOURCE", []string{"replay", anySrc, "--model", hock}, anySrcWhy},
		{"export tit receive completed from MPI_ANY_SOURCE", []string{"export", "tit", anySrc}, anySrcWhy},
		{"replay Wait counting a handle", []string{"replay", waitHandle, "--model", hock}, waitHandleWhy},
		{"export tit Wait counting a handle", []string{"export", "tit", waitHandle}, waitHandleWhy},
		{"replay completion after a Wait of MPI_REQUEST_NULL", []string{"replay", strayDone, "--model", hock}, strayDoneWhy},
		{"replay rank missing", []string{"replay", missing, "--model", hock}, "rank 1 of 3 is missing"},
		{"replay torn", []string{"replay", torn, "--model", hock, "--out", filepath.Join(dir, "r.jsonl")}, "torn"},
		{"export no model", []string{"export", "simgrid", filepath.Join(dir, "nomodel.json"), "--out", out}, "nomodel.json"},
		{"export hosts", []string{"export", "simgrid", hock, "--hosts", "0", "--out", out}, "--hosts 0"},
		{"export model of the local backend", []string{"export", "simgrid", hockLocal, "--out", out}, "MODEL.json " + localModel},
		{"export out on devtmpfs", []string{"export", "simgrid", hock, "--out", "/dev"}, "--out /dev: /dev is on the kernel's devtmpfs filesystem, not a place for data; --out names a directory (new or existing) for platform.xml"},
		{"export out on sysfs", []string{"export", "simgrid", hock, "--out", "/sys/kernel"}, "--out /sys/kernel: /sys/kernel is on the kernel's sysfs filesystem, not a place for data"},
		{"export out on proc", []string{"export", "simgrid", hock, "--out", "/proc/self"}, "--out /proc/self: /proc/self is on the kernel's proc filesystem, not a place for data"},
		{"export a billion hosts", []string{"export", "simgrid", hock, "--hosts", "1000000000", "--out", out}, "--hosts 1000000000: want 1 to 65536 hosts"},
		{"export trilinear", []string{"export", "simgrid", tri, "--out", out}, "cannot be exported"},
		{"export eager of int64", []string{"export", "simgrid", hock, "--hosts", "5", "--eager", "9223372036854775807", "--out", out},
			"--eager 9223372036854775807: 9223372036854775807 is more than 2147483647 bytes (2G less 1), the most one MPI call carries"},
		{"export eager 2G", []string{"export", "simgrid", hock, "--eager", "2G", "--out", out}, "--eager 2G: 2G is more than 2147483647 bytes (2G less 1)"},
		{"export eager negative", []string{"export", "simgrid", hock, "--eager", "-1", "--out", out}, "--eager -1: -1 is negative; a size is 0 or more bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkUsageError(t, dir, tc.args, tc.want)
		})
	}
}

// TestTraceReplayNonRegular: a model file, a programs file or a rank file
// that is a FIFO, and a trace DIR that is not a directory, are bad input
// named at once by every command that reads them, not a read that blocks.
func TestTraceReplayNonRegular(t *testing.T) {
	dir := t.TempDir()
	ff := filepath.Join(dir, "ff")
	if err := syscall.Mkfifo(ff, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	trd := filepath.Join(dir, "trd")
	os.Mkdir(trd, 0o755)
	rank0 := filepath.Join(trd, trace.RankFile(0))
	if err := syscall.Mkfifo(rank0, 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good")
	writeTrace(t, good, 2, false)
	hock := filepath.Join(dir, "hockney.json")
	writeHockney(t, hock)
	out := filepath.Join(dir, "out")
	// Output names taken by directories: export refuses before writing.
	taken := filepath.Join(dir, "taken")
	writeTrace(t, taken, 2, false)
	if err := os.Mkdir(filepath.Join(taken, "rank-1.tit"), 0o755); err != nil {
		t.Fatal(err)
	}
	sgOut := filepath.Join(dir, "sg")
	if err := os.MkdirAll(filepath.Join(sgOut, "platform.xml"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Output names taken by a user's files: refused, the files kept.
	users := filepath.Join(dir, "users")
	writeTrace(t, users, 2, false)
	usersList := filepath.Join(dir, "users-list")
	writeTrace(t, usersList, 2, false)
	userFiles := map[string]string{
		filepath.Join(users, "rank-1.tit"):          "my notes\n",
		filepath.Join(usersList, "simgrid.txt"):     "my list\n",
		filepath.Join(sgOut+"2", "hostfile"):        "node17 slots=4\n",
		filepath.Join(dir, "mytrace", "rank-0.cct"): "not a trace\n",
	}
	for p, data := range userFiles {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for p, data := range userFiles {
			if got, err := os.ReadFile(p); err != nil || string(got) != data {
				t.Errorf("%s: %q, %v; the user's %q was replaced", p, got, err, data)
			}
		}
	}()
	const fifo = " is a named pipe (FIFO), not a regular file"
	notDir := "DIR " + ff + ": " + ff + " is not a directory (want a trace directory written by commcost trace)"

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"replay model FIFO", []string{"replay", "--model", ff, good}, "--model " + ff + ": " + ff + fifo},
		{"replay model directory", []string{"replay", "--model", good, good}, "--model " + good + ": " + good + " is a directory, not a regular file"},
		{"replay rank FIFO", []string{"replay", "--model", hock, trd}, "DIR " + trd + ": " + rank0 + fifo},
		{"replay not a directory", []string{"replay", "--model", hock, ff}, notDir},
		{"assess programs FIFO", []string{"replay", "assess", "--model", hock, "--programs", ff}, "--programs " + ff + ": " + ff + fifo},
		{"summary rank FIFO", []string{"trace", "summary", trd}, "DIR " + trd + ": " + rank0 + fifo},
		{"summary not a directory", []string{"trace", "summary", ff}, notDir},
		{"export simgrid model FIFO", []string{"export", "simgrid", ff, "--out", out}, "MODEL.json " + ff + ": " + ff + fifo},
		{"export simgrid trace rank FIFO", []string{"export", "simgrid", hock, "--trace", trd, "--out", out}, "--trace " + trd + ": " + rank0 + fifo},
		{"export tit rank FIFO", []string{"export", "tit", trd}, "DIR " + trd + ": " + rank0 + fifo},
		{"export tit not a directory", []string{"export", "tit", ff}, notDir},
		{"export tit over a directory", []string{"export", "tit", taken}, filepath.Join(taken, "rank-1.tit") + " is a directory, not a regular file: commcost writes its SimGrid time-independent trace there"},
		{"export simgrid over a directory", []string{"export", "simgrid", hock, "--out", sgOut}, "--out " + sgOut + ": " + filepath.Join(sgOut, "platform.xml") + " is a directory"},
		{"export tit over a user's file", []string{"export", "tit", users}, filepath.Join(users, "rank-1.tit") + " exists and is not a SimGrid time-independent trace commcost wrote"},
		{"export tit over a user's list", []string{"export", "tit", usersList}, filepath.Join(usersList, "simgrid.txt") + " exists and is not a SimGrid trace list commcost wrote"},
		{"export simgrid over a user's file", []string{"export", "simgrid", hock, "--out", sgOut + "2"}, filepath.Join(sgOut+"2", "hostfile") + " exists and is not a SimGrid host file commcost wrote"},
		{"trace with a library that is text", []string{"trace", "--out", filepath.Join(dir, "t2"), "--lib", hock, "--", "true"}, "--lib " + hock + ": " + hock + " is not an ELF shared library"},
		{"trace with a library that is a device", []string{"trace", "--out", filepath.Join(dir, "t2"), "--lib", "/dev/zero", "--", "true"}, "--lib /dev/zero: /dev/zero is a character device, not a regular file"},
		{"trace over a user's rank file", []string{"trace", "--out", filepath.Join(dir, "mytrace"), "--lib", hock, "--", "true"}, filepath.Join(dir, "mytrace", "rank-0.cct") + " exists and is not a trace file commcost wrote"},
		{"export simgrid out a file", []string{"export", "simgrid", hock, "--out", hock}, "--out " + hock + ": " + hock + " is a regular file; --out names a directory (new or existing) for platform.xml, hostfile and smpi.cfg"},
		{"export simgrid out a FIFO", []string{"export", "simgrid", hock, "--out", ff}, "--out " + ff + ": " + ff + " is a named pipe (FIFO); --out names a directory (new or existing)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkUsageErrorPromptly(t, dir, tc.args, tc.want)
		})
	}
}

// TestReplayRuns: a good trace replays, prints the measured and the
// model's figures, and appends one record per model.
func TestReplayRuns(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeTrace(t, good, 3, false)
	hock := filepath.Join(dir, "hockney.json")
	writeHockney(t, hock)
	recs := filepath.Join(dir, "r.jsonl")
	code, stdout, stderr := runCLI(t, "replay", good, "--model", hock, "--out", recs)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"measured", "hockney (best)", "Send", "Recv"} {
		if !bytes.Contains([]byte(stdout), []byte(want)) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	data, err := os.ReadFile(recs)
	if err != nil || bytes.Count(data, []byte("\n")) != 1 || !bytes.Contains(data, []byte(`"bench":"replay"`)) {
		t.Errorf("records %q, %v", data, err)
	}

	// Two model files of one name are two rows told apart.
	other := filepath.Join(dir, "b", "hockney.json")
	os.Mkdir(filepath.Dir(other), 0o755)
	writeModelJSON(t, other, &model.Hockney{Ts: model.Param{Name: "t_s", Value: 2e-6}, Tw: model.Param{Name: "t_w", Value: 1e-9}})
	code, stdout, stderr = runCLI(t, "replay", good, "--model", hock, "--model", other)
	if code != 0 || !strings.Contains(stdout, "hockney-2") {
		t.Errorf("two hockney.json: exit %d, no row hockney-2:\n%s%s", code, stdout, stderr)
	}
}

// TestReplayAssessEscapes: a program's name from the programs file
// reaches the terminal escaped (an ESC would start a terminal's control
// sequence), as every string commcost reads from a file does.
func TestReplayAssessEscapes(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "tr")
	writeTrace(t, tr, 3, false)
	hock := filepath.Join(dir, "hockney.json")
	writeHockney(t, hock)
	list := filepath.Join(dir, "programs.tsv")
	if err := os.WriteFile(list, []byte("ring\x1b[2J\u202e\t"+tr+"\t-\t-\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, stderr := runCLI(t, "replay", "assess", "--model", hock, "--programs", list)
	if strings.ContainsAny(stdout+stderr, "\x1b\u202e") || !strings.Contains(stdout, `ring\x1b[2J\u202e`) {
		t.Errorf("stdout %q, stderr %q: want the name escaped as ring\\x1b[2J\\u202e, no raw control", stdout, stderr)
	}
}

// TestReplayRefusesImpossibleTimes: a replay whose prices no record can
// hold (a model of t_s = 2e9 s over a trace's sends) is refused before
// anything is printed or written.
func TestReplayRefusesImpossibleTimes(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "tr")
	writeTrace(t, tr, 3, false)
	hock := filepath.Join(dir, "hockney.json")
	writeModelJSON(t, hock, &model.Hockney{Ts: model.Param{Name: "t_s", Value: 2e9}, Tw: model.Param{Name: "t_w", Value: 1e-9}})
	out := filepath.Join(dir, "r.jsonl")
	code, stdout, stderr := runCLI(t, "replay", tr, "--model", hock, "--out", out)
	if want := "DIR " + tr + ": priced by the models, the trace gives record replay"; code != 2 || !strings.Contains(stderr, want) || stdout != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing printed, %q", code, stdout, stderr, want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s written", out)
	}
}

// TestExportEager: smpi.cfg's detached-send threshold is --eager, or with
// --trace the MPI's limit the trace recorded (4096 B here) unless --eager
// is given, as in commcost replay.
func TestExportEager(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "tr")
	writeTrace(t, tr, 2, false)
	hock := filepath.Join(dir, "hockney.json")
	writeHockney(t, hock)
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"default", nil, 65536},
		{"eager", []string{"--eager", "1K"}, 1024},
		{"trace", []string{"--trace", tr}, 4096},
		{"trace and eager", []string{"--trace", tr, "--eager", "1K"}, 1024},
		{"eager before trace", []string{"--eager", "256", "--trace", tr}, 256},
		{"trace and eager 0", []string{"--trace", tr, "--eager", "0"}, 0},
		{"trace and the default given", []string{"--trace", tr, "--eager", "64K"}, 65536},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "sg")
			args := append([]string{"export", "simgrid", hock, "--out", out}, tc.args...)
			if code, _, errs := runCLI(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			cfg, err := os.ReadFile(filepath.Join(out, "smpi.cfg"))
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"smpi/send-is-detached-thresh", "smpi/async-small-thresh"} {
				if want := fmt.Sprintf("--cfg=%s:%d\n", key, tc.want); !strings.Contains(string(cfg), want) {
					t.Errorf("smpi.cfg lacks %q:\n%s", want, cfg)
				}
			}
		})
	}
}

// TestNamesEscapedInOutput: the names of the user's files and directories
// that head a table or name its column reach the terminal escaped, as in
// messages: a newline in a model file's name would split the replay
// table's row, an ESC start a terminal's control sequence.
func TestNamesEscapedInOutput(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "tr\x1b[2Jx")
	writeTrace(t, tr, 3, false)
	hock := filepath.Join(dir, "a\nb.json")
	writeHockney(t, hock)
	recs := filepath.Join(dir, "p\x1b[2J.jsonl")
	if code, _, errs := runCLI(t, "pingpong", "--backend", "local", "--sizes", "8,1K,64K", "--max-time", "0.05", "--out", recs, "--quiet"); code != 0 {
		t.Fatalf("pingpong: %s", errs)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", tr, "--model", hock}, `replay of ` + dir + `/tr\x1b[2Jx`},
		{[]string{"replay", tr, "--model", hock}, `a\nb (best)`},
		{[]string{"trace", "summary", tr}, `trace ` + dir + `/tr\x1b[2Jx`},
		{[]string{"fit", "hockney", recs}, `hockney fit of p\x1b[2J.jsonl`},
	} {
		_, stdout, stderr := runCLI(t, tc.args...)
		if strings.ContainsAny(stdout, "\x1b") || strings.Contains(stdout, "a\nb") || !strings.Contains(stdout, tc.want) {
			t.Errorf("%q: want %q escaped in stdout:\n%s%s", tc.args, tc.want, stdout, stderr)
		}
	}
}

// writeHockney writes the replay tests' model file at path: hockney with
// t_s = 1 us and t_w = 1 ns/B.
func writeHockney(t *testing.T, path string) {
	t.Helper()
	writeModelJSON(t, path, &model.Hockney{Ts: model.Param{Name: "t_s", Value: 1e-6}, Tw: model.Param{Name: "t_w", Value: 1e-9}})
}
