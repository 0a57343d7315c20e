package trace

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// LibraryName is the tracing library's file name; make build puts it
// beside bin/commcost.
const LibraryName = "libcommcost-trace.so"

// LibraryEnv names the tracing library when it is not beside commcost.
const LibraryEnv = "COMMCOST_TRACE_LIB"

// DirEnv is the library's trace directory variable.
const DirEnv = "COMMCOST_TRACE_DIR"

// StatusFDEnv names the descriptor of the pipe on which the library reports
// a trace it could not create or write: one line "ERRNO\tOP\tPATH".
const StatusFDEnv = "COMMCOST_TRACE_STATUS_FD"

// Launch runs one rank's program under the tracing library: `commcost
// trace [--out DIR] -- PROGRAM ARGS...`, itself started by mpirun or srun
// once per rank. The program is not recompiled: it runs as a child with
// LD_PRELOAD set to the library, which writes DIR/rank-N.cct.
type Launch struct {
	Out     string `flag:"out" default:"commcost-trace" usage:"the dir to write the trace into, one file per rank (rank-N.cct)" value:"dir"`
	Lib     string `flag:"lib" usage:"the tracing library file (default: libcommcost-trace.so beside the commcost binary, else $COMMCOST_TRACE_LIB)" value:"file"`
	SimGrid bool   `flag:"simgrid" usage:"also write SimGrid's time-independent trace of the run into the directory (rank-N.tit, simgrid.txt)"`
	// Program and Args are the program to trace and its arguments.
	Program string
	Args    []string
	// Convert, when set, is called with the rank's finished file when
	// SimGrid is set (the time-independent writer lives in package
	// simgrid, which reads traces); CheckConvert, before the run, refuses
	// the directory's files Convert would replace that are not its own.
	Convert      func(path string) error
	CheckConvert func(dir string) error
	// Rank and Size are this process's place in the launch (the
	// launcher's environment; Size 0 unknown): rank 0 removes the rank
	// files of a larger earlier run, which would make the trace unreadable.
	Rank, Size int
}

// Validate checks the directory is given.
func (l Launch) Validate() error {
	if strings.TrimSpace(l.Out) == "" {
		return &opts.FieldError{Field: "Out", Value: l.Out, Reason: "want a directory"}
	}
	if what := opts.NotDir(l.Out); what != "" {
		return opts.Field("Out", "", "%s is %s; {Out} names a directory (new or existing) for the trace files", opts.Echo(l.Out), what)
	}
	return nil
}

// sharedObject refuses a file the dynamic loader cannot preload as the
// tracing library: not a regular file, not an ELF shared object (ET_DYN),
// an executable (a position-independent one is ET_DYN too, but names a
// program interpreter, PT_INTERP: ld.so ignores it with a warning), or a
// library that does not wrap MPI (it must define MPI_Init and MPI_Finalize
// and take PMPI_Init from the MPI library, as cctrace.c does; libmpi
// itself defines PMPI_Init). Any of them would let the program run
// untraced to its end.
func sharedObject(path string) error {
	f, err := results.OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var h [18]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:4]) != "\x7fELF" {
		return fmt.Errorf("%s is not an ELF shared library (build it with make build)", path)
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if h[5] == 2 {
		order = binary.BigEndian
	}
	if order.Uint16(h[16:]) != 3 { // ET_DYN
		return fmt.Errorf("%s is an ELF file but not a shared library (build it with make build)", path)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("%s is not an ELF shared library: %v (build it with make build)", path, err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is an executable (it names a program interpreter), not a shared library: the loader would ignore it and run the program untraced (build commcost's tracing library with make build)", path)
		}
	}
	syms, _ := ef.DynamicSymbols()
	defined := map[string]bool{}
	imported := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC && s.Section != elf.SHN_UNDEF {
			continue
		}
		if s.Section == elf.SHN_UNDEF {
			imported[s.Name] = true
		} else {
			defined[s.Name] = true
		}
	}
	if !defined["MPI_Init"] || !defined["MPI_Finalize"] || !imported["PMPI_Init"] {
		return fmt.Errorf("%s is a shared library but not commcost's tracing library: it does not define MPI_Init and MPI_Finalize over the MPI's PMPI_Init (build %s with make build)", path, LibraryName)
	}
	return nil
}

// library finds the tracing library.
func (l Launch) library() (string, error) {
	if l.Lib != "" {
		if err := sharedObject(l.Lib); err != nil {
			return "", opts.Badf("--lib %s: %v", l.Lib, err)
		}
		return filepath.Abs(l.Lib)
	}
	var tried []string
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), LibraryName)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		tried = append(tried, p)
	}
	if p := os.Getenv(LibraryEnv); p != "" {
		if _, err := os.Stat(p); err == nil {
			if err := sharedObject(p); err != nil {
				return "", opts.Badf("$%s: %v", LibraryEnv, err)
			}
			return filepath.Abs(p)
		}
		tried = append(tried, p+" ($"+LibraryEnv+")")
	}
	return "", opts.Badf("no tracing library (tried %s): run make build, or give --lib", strings.Join(tried, ", "))
}

// Run runs the program and waits for it. The program's own failure is a
// runtime failure (exit 1) naming its status; a program that ran but
// wrote no trace (it never called MPI_Init with the library loaded: not an
// MPI program, statically linked, or LD_PRELOAD refused) is bad input.
func (l Launch) Run(stdout, stderr io.Writer) error {
	if l.Program == "" {
		return opts.Badf("no program to trace: commcost trace [--out DIR] -- PROGRAM ARGS...")
	}
	prog, err := exec.LookPath(l.Program)
	if err != nil {
		return opts.Badf("%s: no such program (%v)", l.Program, errors.Unwrap(err))
	}
	dir, err := filepath.Abs(l.Out)
	if err != nil {
		return err
	}
	if err := checkOwnTraces(dir); err != nil {
		return err
	}
	lib, err := l.library()
	if err != nil {
		return err
	}
	if l.Rank == 0 && l.Size > 0 {
		if err := removeStale(dir, l.Size); err != nil {
			return err
		}
	}
	if l.SimGrid && l.CheckConvert != nil {
		if err := l.CheckConvert(dir); err != nil {
			return err
		}
	}
	// --out and its missing parents are created, as every --out is; a
	// run that writes nothing leaves none of them behind
	created := missingDirs(dir)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return opts.Badf("--out %s: %v", l.Out, err)
	}
	defer func() {
		for _, d := range created {
			ents, err := os.ReadDir(d)
			if errors.Is(err, fs.ErrNotExist) {
				continue // another rank removed it
			}
			if err != nil || len(ents) > 0 {
				return
			}
			if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return
			}
		}
	}()
	cmd := exec.Command(prog, l.Args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	env := os.Environ()
	preload := lib
	if old := os.Getenv("LD_PRELOAD"); old != "" {
		preload += ":" + old
	}
	status, statusW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer status.Close()
	// ExtraFiles[0] is the child's fd 3
	cmd.ExtraFiles = []*os.File{statusW}
	env = append(env, "LD_PRELOAD="+preload, DirEnv+"="+dir, StatusFDEnv+"=3")
	cmd.Env = env
	err = cmd.Start()
	statusW.Close()
	if err != nil {
		return opts.Badf("%s: %v", prog, err)
	}
	report := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(status, 1<<16))
		report <- b
	}()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	signal.Stop(sigs)
	close(done)
	// The library has written its report before the program exited; a
	// process the program left running may hold the pipe open, so the
	// read waits only a moment for the end.
	status.SetReadDeadline(time.Now().Add(time.Second))
	if err := libraryFailure(<-report, dir, prog, werr); err != nil {
		return err
	}
	if werr != nil {
		// A rank that died before MPI_Finalize leaves its unfinished file
		// hidden beside the others: say where, and that it is no trace.
		if parts, _ := filepath.Glob(filepath.Join(dir, ".rank-*.cct.part")); len(parts) > 0 {
			return fmt.Errorf("%s: %v (%d unfinished rank files such as %s are no trace: those ranks did not reach MPI_Finalize)", prog, werr, len(parts), parts[0])
		}
		return fmt.Errorf("%s: %v", prog, werr)
	}
	path, err := findByPID(dir, cmd.Process.Pid)
	if err != nil {
		return err
	}
	if path == "" {
		return opts.Badf("%s ran but wrote no trace into %s: it never called MPI_Init with %s loaded (not an MPI program, statically linked, or LD_PRELOAD refused)", prog, dir, lib)
	}
	if l.SimGrid && l.Convert != nil {
		return l.Convert(path)
	}
	return nil
}

// libraryFailure is the runtime failure the library reported (a trace
// file it could not create or write, a full disk), nil for none: the file
// and the error, and the program's own failure too. The library removed
// its unfinished file; it is removed here too when it is still there.
func libraryFailure(report []byte, dir, prog string, werr error) error {
	f := strings.SplitN(string(report), "\t", 3)
	if len(f) != 3 {
		return nil
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return nil
	}
	path := f[2]
	if filepath.Dir(path) == dir && partFileRE.MatchString(filepath.Base(path)) {
		_ = os.Remove(path)
	}
	msg := fmt.Sprintf("cannot %s the trace file %s: %v; %s ran on untraced and its unfinished file is removed", f[1], path, syscall.Errno(n), prog)
	if werr != nil {
		msg += fmt.Sprintf(", and the program failed too (%v)", werr)
	}
	return errors.New(msg)
}

// partFileRE matches the name of a rank file the library is writing.
var partFileRE = regexp.MustCompile(`^\.rank-\d+\.cct\.part$`)

// checkOwnTraces refuses, before the run, a rank file name of dir taken by
// something other than a commcost trace (the library renames each rank's
// finished file over it): a user's file of that name is not replaced.
func checkOwnTraces(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // a new directory: nothing to replace
	}
	for _, e := range ents {
		if rankFileRE.MatchString(e.Name()) {
			own := func(h []byte) bool { return string(h) == Magic }
			if err := results.CheckOwn(filepath.Join(dir, e.Name()), "trace file", len(Magic), own); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeStale removes from dir the rank files of ranks size and above
// that an earlier, larger run left (checkOwnTraces has found them to be
// traces): with them the directory reads as no one run's.
func removeStale(dir string, size int) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range ents {
		m := rankFileRE.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if r, err := strconv.Atoi(m[1]); err == nil && r >= size {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("--out %s: removing the earlier run's %s: %w", dir, e.Name(), err)
			}
		}
	}
	return nil
}

// missingDirs lists dir and its ancestors that do not exist, deepest
// first: what MkdirAll(dir) creates.
func missingDirs(dir string) []string {
	var ds []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return ds
		}
		ds = append(ds, d)
		if filepath.Dir(d) == d {
			return ds
		}
	}
}

// findByPID returns the rank file whose header names pid, or "". A
// directory that is gone is no file: the launch's other ranks remove the
// --out they created when their programs wrote nothing, perhaps before
// this rank's program has ended.
func findByPID(dir string, pid int) (string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if !rankFileRE.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		// a FIFO left in --out by hand would block a plain open
		f, err := results.OpenRegular(p)
		if err != nil {
			continue
		}
		var h [HeaderBytes]byte
		_, err = io.ReadFull(f, h[:])
		f.Close()
		if err == nil && string(h[:len(Magic)]) == Magic && int(int32(binary.LittleEndian.Uint32(h[24:]))) == pid {
			return p, nil
		}
	}
	return "", nil
}
