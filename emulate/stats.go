package emulate

import (
	"fmt"
	"sort"
)

// LinkStats counts the traffic of one outgoing link of a service node.
// Packets and Bytes count application traffic (requests, replies, barrier
// and lock packets, wire bytes including headers); control packets of the
// emulation (credits, shutdown, counter collection) are not counted.
type LinkStats struct {
	To           int   `json:"to"` // neighbour node, or -1 for the application link
	Packets      int64 `json:"packets"`
	Bytes        int64 `json:"bytes"`
	QueueHWM     int   `json:"queue_hwm"`     // longest the FIFO queue has been
	CreditStalls int64 `json:"credit_stalls"` // packets that waited for a buffer at the neighbour
}

// NodeStats counts the work of one service node.
type NodeStats struct {
	Node       int         `json:"node"`
	Label      string      `json:"label"`
	Received   int64       `json:"received"` // packets taken in (credits excluded)
	Reads      int64       `json:"reads"`    // read requests served by this module
	Writes     int64       `json:"writes"`
	Combined   int64       `json:"combined"` // barrier packets merged into a queued one
	CreditMsgs int64       `json:"credit_msgs"`
	HeldHWM    int         `json:"held_hwm"` // most buffers in use at once
	SinkHWM    int         `json:"sink_hwm"` // longest request queue at the module
	Links      []LinkStats `json:"links"`
}

// Counters flattens per-node counters into the keys of a results.Record's
// Counters: totals and maxima over the network, then one key per link
// ("link.3-5.packets", "link.0-app.bytes") and per node ("node.3.held_hwm").
func Counters(stats []NodeStats) map[string]float64 {
	c := map[string]float64{}
	var linkPk, linkBy []float64
	for _, s := range stats {
		c["received"] += float64(s.Received)
		c["reads"] += float64(s.Reads)
		c["writes"] += float64(s.Writes)
		c["barrier_combined"] += float64(s.Combined)
		c["credit_msgs"] += float64(s.CreditMsgs)
		c["held_hwm_max"] = max(c["held_hwm_max"], float64(s.HeldHWM))
		c["sink_hwm_max"] = max(c["sink_hwm_max"], float64(s.SinkHWM))
		c[fmt.Sprintf("node.%d.held_hwm", s.Node)] = float64(s.HeldHWM)
		for _, l := range s.Links {
			to := fmt.Sprint(l.To)
			if l.To < 0 {
				to = "app"
			}
			key := fmt.Sprintf("link.%d-%s.", s.Node, to)
			c[key+"packets"] = float64(l.Packets)
			c[key+"bytes"] = float64(l.Bytes)
			c[key+"queue_hwm"] = float64(l.QueueHWM)
			c["packets"] += float64(l.Packets)
			c["bytes"] += float64(l.Bytes)
			c["credit_stalls"] += float64(l.CreditStalls)
			c["queue_hwm_max"] = max(c["queue_hwm_max"], float64(l.QueueHWM))
			if l.To >= 0 {
				linkPk = append(linkPk, float64(l.Packets))
				linkBy = append(linkBy, float64(l.Bytes))
			}
		}
	}
	if len(linkPk) > 0 {
		sort.Float64s(linkPk)
		sort.Float64s(linkBy)
		sum := 0.0
		for _, v := range linkPk {
			sum += v
		}
		c["link_packets_max"] = linkPk[len(linkPk)-1]
		c["link_packets_mean"] = sum / float64(len(linkPk))
		c["link_bytes_max"] = linkBy[len(linkBy)-1]
	}
	return c
}
