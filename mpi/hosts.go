package mpi

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcessorName is the name MPI gives this rank's processor
// (MPI_Get_processor_name, through Describer), or the host name when the
// backend does not say.
func ProcessorName(c Comm) string {
	if d, ok := c.(Describer); ok {
		if p := d.Info().Processor; p != "" {
			return p
		}
	}
	h, _ := os.Hostname()
	return h
}

// hostNameLen is the longest processor name HostLayout keeps
// (MPI_MAX_PROCESSOR_NAME is 256 in Open MPI and MPICH).
const hostNameLen = 256

// HostLayout gathers every rank's processor name at rank 0 and returns, on
// every rank, the distinct hosts in order of first appearance and the
// number of ranks on each. It is collective. Only rank 0 holds the P names
// (an Allgather would give every rank all of them: P^2 bytes in all,
// 8.5 GB at 4096 local ranks); the others receive the short host list.
func HostLayout(c Comm) (hosts []string, ranks []int, err error) {
	send := make([]byte, hostNameLen)
	copy(send, ProcessorName(c))
	var recv []byte
	if c.Rank() == 0 {
		recv = make([]byte, hostNameLen*c.Size())
	}
	if err := c.Gather(send, recv, 0); err != nil {
		return nil, nil, err
	}
	// Rank 0 encodes "host\tcount\n" lines; the length goes first so the
	// others can size their buffer.
	var layout []byte
	if c.Rank() == 0 {
		count := map[string]int{}
		var order []string
		for r := 0; r < c.Size(); r++ {
			h := string(bytes.TrimRight(recv[r*hostNameLen:(r+1)*hostNameLen], "\x00"))
			if count[h] == 0 {
				order = append(order, h)
			}
			count[h]++
		}
		var b bytes.Buffer
		for _, h := range order {
			fmt.Fprintf(&b, "%s\t%d\n", h, count[h])
		}
		layout = b.Bytes()
	}
	n := []int64{int64(len(layout))}
	if err := BcastInt64s(c, n, 0); err != nil {
		return nil, nil, err
	}
	if c.Rank() != 0 {
		layout = make([]byte, n[0])
	}
	if err := c.Bcast(layout, 0); err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(layout), "\n"), "\n") {
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, '\t')
		if i < 0 {
			return nil, nil, fmt.Errorf("mpi: host layout: malformed line %q from rank 0", line)
		}
		k, err := strconv.Atoi(line[i+1:])
		if err != nil {
			return nil, nil, fmt.Errorf("mpi: host layout: malformed line %q from rank 0", line)
		}
		hosts = append(hosts, line[:i])
		ranks = append(ranks, k)
	}
	return hosts, ranks, nil
}
