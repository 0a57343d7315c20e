package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Block is a communication block CB(a, b) of the hyperbolic model (paper
// 001, section 2): A is the fixed service time in seconds (the time of a
// small message, x -> 0), B the incremental service time in seconds per byte
// (the asymptotic slope, x -> infinity).
type Block struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// Time is the total service time of a message of x bytes,
//
//	T(x; a, b) = a^2/(a + b x) + b x
//
// (paper 001, eq. 2; rule 4 applies it to any reduced graph). T(0) = a and
// T has the asymptote of slope b. A block with a = b = 0 costs nothing.
func (c Block) Time(x float64) float64 {
	d := c.A + c.B*x
	if d == 0 {
		return 0
	}
	return c.A*c.A/d + c.B*x
}

// Scale is rule 3 (paper 001, section 2.3) for k concurrent messages of
// equal size: each is served by an equivalent block with a_i = k a and
// b_i = b (Σ x_j)/x_i = k b.
func (c Block) Scale(k float64) Block { return Block{A: k * c.A, B: k * c.B} }

// Serial reduces blocks that process every packet of a message one after
// another (paper 001, rule 1): a = Σ a_i for independent and dependent
// blocks; b = max b_i for independent blocks (they pipeline), b = Σ b_i for
// dependent ones (they share a resource).
func Serial(dependent bool, blocks ...Block) Block {
	var r Block
	for _, b := range blocks {
		r.A += b.A
		if dependent {
			r.B += b.B
		} else {
			r.B = math.Max(r.B, b.B)
		}
	}
	return r
}

// Parallel reduces blocks any of which can process any packet (paper 001,
// rule 2): a = min a_i; b = (Σ 1/b_i)^-1 for independent blocks (resistors
// in parallel), b = min b_i for dependent ones.
func Parallel(dependent bool, blocks ...Block) Block {
	if len(blocks) == 0 {
		return Block{}
	}
	r := Block{A: math.Inf(1), B: math.Inf(1)}
	var inv float64
	for _, b := range blocks {
		r.A = math.Min(r.A, b.A)
		if dependent {
			r.B = math.Min(r.B, b.B)
		} else if b.B == 0 {
			inv = math.Inf(1)
		} else {
			inv += 1 / b.B
		}
	}
	if !dependent {
		r.B = 1 / inv
	}
	return r
}

// Concurrent is rule 3 (paper 001, section 2.3): a block processing n
// messages of sizes x_1..x_n at once is equivalent to n independent blocks,
// block i serving message i with a_i = n a and b_i = b (Σ_j x_j)/x_i. (The
// conservative assumption: message i is the last one the block serves.)
// Sizes must be positive.
func Concurrent(c Block, sizes []float64) []Block {
	var sum float64
	for _, x := range sizes {
		sum += x
	}
	out := make([]Block, len(sizes))
	n := float64(len(sizes))
	for i, x := range sizes {
		out[i] = Block{A: n * c.A, B: c.B * sum / x}
	}
	return out
}

// EndToEnd is paper 001, eq. 3: a message from one workstation CB_w over
// the network CB_c to another, serial and independent:
// a = 2 a_w + a_c, b = max{b_w, b_c}.
func EndToEnd(w, c Block) Block { return Serial(false, w, c, w) }

// AllToAll is paper 001, eq. 4: n workstations each send one message to
// every other. By rule 3 an end node serves 2(n-1) messages (n-1 sent, n-1
// received) and the shared network n(n-1); by rule 1
//
//	a(n) = 4(n-1) a_w + n(n-1) a_c,  b(n) = max{2(n-1) b_w, n(n-1) b_c}.
func AllToAll(w, c Block, n int) Block {
	k := float64(n - 1)
	return Serial(false, w.Scale(2*k), c.Scale(float64(n)*k), w.Scale(2*k))
}

// Pairwise is paper 001, eq. 8 (IBM SP2): node i sends to node n+i,
// i = 1..n, over one network block shared by the n messages:
//
//	a(n) = 2 a_p + n a_c,  b(n) = max{b_p, n b_c}.
func Pairwise(p, c Block, n int) Block {
	return Serial(false, p, c.Scale(float64(n)), p)
}

// RowContention is paper 001, eq. 12 (Intel Paragon, one mesh row): node i
// sends to node 2n-i+1, so the n messages all cross the two communication
// processors of the middle nodes n and n+1:
//
//	a(n) = 2 a_p + 2n a_c,  b(n) = max{b_p, n b_c}.
func RowContention(p, c Block, n int) Block {
	cn := c.Scale(float64(n))
	return Serial(false, p, cn, cn, p)
}

// ChainShift is the dominant pattern of paper 001's test application
// (section 4.2, Fig. 6, Table 1): n nodes in a chain, node i sending one
// message of x bytes to node i+1, all at once (the time-parallel multigrid
// moving whole planes between neighbouring time levels). For the message
// between two interior nodes, each end node serves two messages (it sends
// one and receives one; rule 3), and the network block serves the
// messages that share it:
//
//	medium  network           a                       b                           Table 1 row
//	shared  (n-1) messages    4 a_w + (n-1) a_c       max{2 b_w, (n-1) b_c}       Ethernet/FDDI
//	link    one message       4 a_p + a_l             max{2 b_p, b_l}             IBM SP2
//	row     two comm. procs   4 a_p + 2 a_c           max{2 b_p, 2 b_c}           Intel Paragon
//
// (the SP2 row's dedicated link CB_l is the network block serving one
// message). With n = 2 each node only sends or only receives, and the
// pattern is one message, eq. 3. With duplex, the end node's incremental
// service is per direction (a full-duplex link carries the message sent
// and the one received side by side): b_w enters once, not twice; its
// fixed service a_w, the processor's, still serves both.
func ChainShift(w, c Block, n int, network string, duplex bool) Block {
	if n <= 2 {
		return EndToEnd(w, c)
	}
	node := w.Scale(2)
	if duplex {
		node.B = w.B
	}
	var net Block
	switch network {
	case "alltoall":
		net = c.Scale(float64(n - 1))
	case "pairwise":
		net = c
	default:
		net = c.Scale(2)
	}
	return Serial(false, node, net, node)
}

// Graph is a communication graph (paper 001, section 2) written as an
// expression and reduced to one block with the rules:
//
//	expr    = number "*" expr | primary
//	primary = name | op "(" expr {"," expr} ")" | "(" expr ")"
//	op      = "serial" | "serial_dep" | "parallel" | "parallel_dep"
//
// A name is a block looked up when reducing ("w", "c", "p", ...).
// "serial"/"parallel" combine independent blocks, the "_dep" forms
// dependent ones (rules 1, 2); "k*e" makes e serve k concurrent messages of
// equal size (rule 3: a and b times k). Example, paper 001 eq. 4 for n = 4:
//
//	serial(6*w, 12*c, 6*w)
type Graph struct{ root *gnode }

type gnode struct {
	op    string // "leaf", "serial", "serial_dep", "parallel", "parallel_dep"
	name  string
	count float64 // rule-3 multiplicity; 1 when absent
	kids  []*gnode
}

// ParseGraph parses a graph expression.
func ParseGraph(s string) (*Graph, error) {
	p := &gparser{src: s}
	p.next()
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.tok != "" {
		return nil, fmt.Errorf("graph %q: unexpected %q at offset %d", s, p.tok, p.tokPos)
	}
	return &Graph{root: n}, nil
}

// maxGraphDepth bounds nesting so a hostile expression cannot exhaust the
// stack.
const maxGraphDepth = 100

type gparser struct {
	src    string
	pos    int
	tok    string
	tokPos int
}

func (p *gparser) next() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
	p.tokPos = p.pos
	if p.pos >= len(p.src) {
		p.tok = ""
		return
	}
	c := p.src[p.pos]
	switch {
	case strings.IndexByte("(),*", c) >= 0:
		p.tok = p.src[p.pos : p.pos+1]
		p.pos++
	case c == '.' || (c >= '0' && c <= '9'):
		start := p.pos
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' ||
				((c == '+' || c == '-') && p.pos > start && (p.src[p.pos-1] == 'e' || p.src[p.pos-1] == 'E')) {
				p.pos++
				continue
			}
			break
		}
		p.tok = p.src[start:p.pos]
	case isIdentStart(c):
		start := p.pos
		for p.pos < len(p.src) {
			c := p.src[p.pos]
			if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
				p.pos++
				continue
			}
			break
		}
		p.tok = p.src[start:p.pos]
	default:
		p.tok = p.src[p.pos : p.pos+1]
		p.pos++
	}
}

func (p *gparser) errf(format string, args ...any) error {
	return fmt.Errorf("graph %q at offset %d: %s", p.src, p.tokPos, fmt.Sprintf(format, args...))
}

// isIdentStart: block names are ASCII identifiers.
func isIdentStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isNumberTok(t string) bool { return t != "" && (t[0] == '.' || (t[0] >= '0' && t[0] <= '9')) }

func (p *gparser) expr(depth int) (*gnode, error) {
	if depth > maxGraphDepth {
		return nil, p.errf("nested deeper than %d", maxGraphDepth)
	}
	count := 1.0
	if isNumberTok(p.tok) {
		v, err := strconv.ParseFloat(p.tok, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v <= 0 {
			return nil, p.errf("count %q is not a positive number", p.tok)
		}
		count = v
		p.next()
		if p.tok != "*" {
			return nil, p.errf("want \"*\" after the count %g, got %q", count, p.tok)
		}
		p.next()
	}
	var n *gnode
	var err error
	if count != 1 || isNumberTok(p.tok) {
		n, err = p.expr(depth + 1) // "2*3*x": counts multiply
	} else {
		n, err = p.primary(depth)
	}
	if err != nil {
		return nil, err
	}
	if count != 1 {
		// Wrap so "2*3*x" style nesting composes multiplicatively.
		n = &gnode{op: "serial", count: count, kids: []*gnode{n}}
	}
	return n, nil
}

func (p *gparser) primary(depth int) (*gnode, error) {
	switch {
	case p.tok == "(":
		p.next()
		n, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok != ")" {
			return nil, p.errf("want \")\", got %q", p.tok)
		}
		p.next()
		return n, nil
	case p.tok == "":
		return nil, p.errf("unexpected end, want a block name or serial(...)/parallel(...)")
	case isIdentStart(p.tok[0]):
		name := p.tok
		p.next()
		switch name {
		case "serial", "serial_dep", "parallel", "parallel_dep":
			if p.tok != "(" {
				return nil, p.errf("want \"(\" after %s, got %q", name, p.tok)
			}
			p.next()
			n := &gnode{op: name, count: 1}
			for {
				k, err := p.expr(depth + 1)
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, k)
				if p.tok == "," {
					p.next()
					continue
				}
				if p.tok == ")" {
					p.next()
					return n, nil
				}
				return nil, p.errf("want \",\" or \")\" in %s(...), got %q", name, p.tok)
			}
		}
		return &gnode{op: "leaf", name: name, count: 1}, nil
	}
	return nil, p.errf("unexpected %q", p.tok)
}

// Reduce reduces the graph to one block, looking names up in blocks.
func (g *Graph) Reduce(blocks map[string]Block) (Block, error) { return g.root.reduce(blocks) }

func (n *gnode) reduce(env map[string]Block) (Block, error) {
	var b Block
	if n.op == "leaf" {
		v, ok := env[n.name]
		if !ok {
			return Block{}, fmt.Errorf("graph: no block named %q", n.name)
		}
		b = v
	} else {
		kids := make([]Block, len(n.kids))
		for i, k := range n.kids {
			v, err := k.reduce(env)
			if err != nil {
				return Block{}, err
			}
			kids[i] = v
		}
		switch n.op {
		case "serial":
			b = Serial(false, kids...)
		case "serial_dep":
			b = Serial(true, kids...)
		case "parallel":
			b = Parallel(false, kids...)
		case "parallel_dep":
			b = Parallel(true, kids...)
		}
	}
	return b.Scale(n.count), nil
}

// String formats the graph in the syntax ParseGraph reads.
func (g *Graph) String() string {
	var sb strings.Builder
	g.root.format(&sb)
	return sb.String()
}

func (n *gnode) format(sb *strings.Builder) {
	if n.count != 1 {
		sb.WriteString(strconv.FormatFloat(n.count, 'g', -1, 64))
		sb.WriteByte('*')
	}
	if n.op == "leaf" {
		sb.WriteString(n.name)
		return
	}
	if n.count != 1 && n.op == "serial" && len(n.kids) == 1 {
		// The wrapper ParseGraph makes for "k*e": print e in parentheses.
		sb.WriteByte('(')
		n.kids[0].format(sb)
		sb.WriteByte(')')
		return
	}
	sb.WriteString(n.op)
	sb.WriteByte('(')
	for i, k := range n.kids {
		if i > 0 {
			sb.WriteString(", ")
		}
		k.format(sb)
	}
	sb.WriteByte(')')
}
