package patterns

import "github.com/commcost/commcost/mpi"

// Counts is one rank's traffic: messages and bytes it sent and received.
// Patterns accumulate it over every repetition (warm-up included) and
// divide by the number of repetitions (PerRep), so it is the traffic of one
// repetition, averaged where the pattern draws a fresh random instance per
// repetition.
type Counts struct {
	MsgsSent, MsgsRecv   float64
	BytesSent, BytesRecv float64
}

// Sent counts one message of n bytes sent.
func (c *Counts) Sent(n int) { c.MsgsSent++; c.BytesSent += float64(n) }

// Recv counts one message of n bytes received.
func (c *Counts) Recv(n int) { c.MsgsRecv++; c.BytesRecv += float64(n) }

// add counts sent messages of sentBytes and recv messages of recvBytes.
func (c *Counts) add(sent, sentBytes, recv, recvBytes int) {
	c.MsgsSent += float64(sent)
	c.BytesSent += float64(sent) * float64(sentBytes)
	c.MsgsRecv += float64(recv)
	c.BytesRecv += float64(recv) * float64(recvBytes)
}

// PerRep divides the counts by the number of repetitions that made them.
func (c Counts) PerRep(reps int) Counts {
	if reps <= 0 {
		return Counts{}
	}
	f := 1 / float64(reps)
	return Counts{c.MsgsSent * f, c.MsgsRecv * f, c.BytesSent * f, c.BytesRecv * f}
}

// Counter names written by CountersOf into results.Record.Counters; all are
// per repetition. The _max values are those of the busiest rank (the h of an
// h-relation), the _total values sums over ranks.
const (
	CounterMsgsSentMax  = "msgs_sent_max"
	CounterMsgsRecvMax  = "msgs_recv_max"
	CounterBytesSentMax = "bytes_sent_max"
	CounterBytesRecvMax = "bytes_recv_max"
	CounterMsgsTotal    = "msgs_total"
	CounterBytesTotal   = "bytes_total"
	// CounterIters is the iterations (round trips, exchanges) per
	// repetition of the patterns that time a batch.
	CounterIters = "iters"
)

// CountersOf reduces every rank's per-repetition Counts to the counters of a
// record (see the Counter* names). It is collective; every rank gets the
// same map.
func CountersOf(c mpi.Comm, mine Counts) (map[string]float64, error) {
	in := []float64{mine.MsgsSent, mine.MsgsRecv, mine.BytesSent, mine.BytesRecv}
	mx := make([]float64, len(in))
	if err := c.AllreduceFloat64s(in, mx, mpi.OpMax); err != nil {
		return nil, err
	}
	sum := make([]float64, len(in))
	if err := c.AllreduceFloat64s(in, sum, mpi.OpSum); err != nil {
		return nil, err
	}
	return map[string]float64{
		CounterMsgsSentMax:  mx[0],
		CounterMsgsRecvMax:  mx[1],
		CounterBytesSentMax: mx[2],
		CounterBytesRecvMax: mx[3],
		CounterMsgsTotal:    sum[0],
		CounterBytesTotal:   sum[2],
	}, nil
}

// finish completes a counting pattern's Measurement: counts accumulated
// over reps repetitions become this rank's per-repetition traffic (Mine)
// and, reduced over ranks, the record's counters, with extra counters added.
// It is collective.
func finish(c mpi.Comm, m Measurement, total Counts, reps int, extra map[string]float64) (Measurement, error) {
	mine := total.PerRep(reps)
	ctr, err := CountersOf(c, mine)
	if err != nil {
		return Measurement{}, err
	}
	for k, v := range extra {
		ctr[k] = v
	}
	m.Mine, m.Counters = mine, ctr
	return m, nil
}
