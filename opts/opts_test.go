package opts

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

type op int

func (o *op) UnmarshalText(b []byte) error {
	switch string(b) {
	case "read":
		*o = 0
	case "write":
		*o = 1
	default:
		return fmt.Errorf("%q is not read or write", b)
	}
	return nil
}

func (o op) String() string { return [...]string{"read", "write"}[o] }

type grid struct {
	K Ints   `flag:"k" default:"1,2" usage:"send hot spots"`
	R Floats `flag:"r" default:"0.5,1"`
}

type common struct {
	Seed int64 `flag:"seed" default:"1"`
}

type cfg struct {
	common
	Sizes   Sizes         `flag:"sizes" default:"1:8" param:"bytes"`
	Ops     []op          `flag:"op" default:"read"`
	Iters   int           `flag:"iters"`
	Quiet   bool          `flag:"quiet"`
	Name    string        `flag:"name" default:"x"`
	MaxTime float64       `flag:"max-time" default:"0.5"`
	Idle    time.Duration `flag:"idle" default:"50ms"`
	Mem     Bytes         `flag:"mem" default:"64M"`
	Cal     grid          `flags:"cal-"`
	hidden  int
}

func (c *cfg) Validate() error {
	for _, k := range c.Cal.K {
		if k < 1 {
			return Prefix("Cal", Field("K", k, "must be positive; at most {R}"))
		}
	}
	if c.Iters < 0 {
		return Field("Iters", c.Iters, "must not be negative (above {Sizes})")
	}
	return nil
}

func parse(t *testing.T, args ...string) (*cfg, *Binding, error) {
	t.Helper()
	var c cfg
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	b := Bind(fs, &c)
	if err := fs.Parse(args); err != nil {
		return &c, b, err
	}
	return &c, b, b.Err(c.Validate())
}

func TestBindDefaults(t *testing.T) {
	c, b, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Sizes, Sizes{1, 2, 4, 8}) || c.Seed != 1 || c.Name != "x" || c.MaxTime != 0.5 ||
		c.Idle != 50*time.Millisecond || c.Mem != 64<<20 || !slices.Equal(c.Cal.K, Ints{1, 2}) || len(c.Ops) != 1 {
		t.Errorf("defaults: %+v", *c)
	}
	if b.Flag("Cal.K") != "cal-k" || b.FlagOfParam("bytes") != "sizes" || b.Given("Sizes") {
		t.Errorf("binding: %q %q %v", b.Flag("Cal.K"), b.FlagOfParam("bytes"), b.Given("Sizes"))
	}
	var z cfg
	FillDefaults(&z)
	z.Iters = 3
	FillDefaults(&z)
	if z.Iters != 3 || z.Seed != 1 || !slices.Equal(z.Cal.R, Floats{0.5, 1}) {
		t.Errorf("FillDefaults: %+v", z)
	}
}

func TestBindParse(t *testing.T) {
	c, b, err := parse(t, "--sizes", "8,1K", "--op", "write,read", "--cal-k", "1:4", "--iters", "3", "--mem", "1K")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Sizes, Sizes{8, 1024}) || c.Ops[0] != 1 || !slices.Equal(c.Cal.K, Ints{1, 2, 4}) || c.Mem != 1024 {
		t.Errorf("%+v", *c)
	}
	if !b.Given("Cal.K") || b.Text("Cal.K") != "1:4" || b.FlagText("Sizes") != "--sizes 8,1K" {
		t.Errorf("given %v text %q %q", b.Given("Cal.K"), b.Text("Cal.K"), b.FlagText("Sizes"))
	}
}

func TestBindErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--cal-k", "0,1", "--iters", "2"}, "--cal-k 0,1: 0: must be positive; at most --cal-r"},
		{[]string{"--iters", "-1"}, "--iters -1: must not be negative (above --sizes)"},
		{[]string{"--sizes", "1,1K,1024"}, "1024 is listed twice"},
		{[]string{"--sizes", "4K:1K"}, "the range must not decrease"},
		{[]string{"--cal-r", ""}, "empty list"},
		{[]string{"--cal-r", "0.5,,1"}, "empty item"},
		{[]string{"--op", "read,rmw"}, `"rmw" is not read or write`},
		{[]string{"--op", "read,read"}, "read is listed twice"},
		{[]string{"--mem", "-1"}, "negative"},
		{[]string{"--sizes", "3G"}, "more than 2147483647 bytes (2G less 1)"},
		// An int list's bound names the flag and what it holds, not bytes.
		{[]string{"--cal-k", "1,3G"}, "--cal-k (send hot spots) is at most 2147483647 (2G less 1): 3G is more; accepted forms: a list"},
		{[]string{"--cal-k", "1:3G"}, "a range of --cal-k (send hot spots) ends at most at 2147483647 (2G less 1): 3G is more"},
		// A negative is refused by the configuration in its own terms,
		// however large, not called "more" than the top.
		{[]string{"--cal-k", "-9223372036854775808"}, "--cal-k -9223372036854775808: must be positive; at most --cal-r"},
		{[]string{"--cal-k", "1,-3G"}, "--cal-k 1,-3G: -3221225472: must be positive"},
		{[]string{"--cal-k", "-99999999999999999999"}, "-99999999999999999999 is beyond the integers (at least -9223372036854775808)"},
		{[]string{"--sizes", "-9223372036854775808"}, "-9223372036854775808 is negative; a size is 0 or more bytes"},
		// A value of a range is named in the range as typed.
		{[]string{"--cal-k", "0:4"}, "--cal-k 0:4: its start 0 must be positive; at most --cal-r"},
		{[]string{"--cal-k", "8,0:2"}, "--cal-k 0:2: its start 0 must be positive; at most --cal-r"},
	}
	for _, tt := range tests {
		_, _, err := parse(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want %q", tt.args, err, tt.want)
		}
	}
	// A range's values as the configuration names them, an item or the
	// field's value: the range as typed and where the value lies in it.
	for _, tt := range []struct {
		text string
		err  *FieldError
		want string
	}{
		{"0:2", Item("Cal.K", 0, "is not positive; the value must be positive (an integer >= 1)"), "--cal-k 0:2: its start 0 is not positive; the value must be positive (an integer >= 1)"},
		{"0:3", Field("Cal.K", 0, "is not positive"), "--cal-k 0:3: its start 0 is not positive"},
		{"1:4", Field("Cal.K", 4, "is more than 3 ranks"), "--cal-k 1:4: its end 4 is more than 3 ranks"},
		{"1:8", Item("Cal.K", 2, "k = 2: is odd"), "--cal-k 1:8: its value 2: k = 2: is odd"},
		{"1,2,4", Item("Cal.K", 2, "is odd"), "--cal-k 2: is odd"},
	} {
		_, b, _ := parse(t, "--cal-k", tt.text) // the binding holds the text, whatever Validate says
		if got := b.Err(tt.err); got == nil || got.Error() != tt.want {
			t.Errorf("--cal-k %s, %v: got %v, want %s", tt.text, tt.err, got, tt.want)
		}
	}
	// A library caller reads the field's name.
	var c cfg
	FillDefaults(&c)
	c.Cal.K = Ints{0}
	err := c.Validate()
	if err == nil || err.Error() != "Cal.K = 0: must be positive; at most Cal.R" || !IsBadInput(err) {
		t.Errorf("library error %v", err)
	}
	if IsBadInput(errors.New("x")) || !IsBadInput(fmt.Errorf("w: %w", Badf("y"))) {
		t.Error("IsBadInput")
	}
}

func TestBindPanics(t *testing.T) {
	for name, v := range map[string]any{
		"not a pointer": cfg{},
		"bad type": &struct {
			C chan int `flag:"c"`
		}{},
		"bad default": &struct {
			N int `flag:"n" default:"x"`
		}{},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			Bind(flag.NewFlagSet("t", flag.ContinueOnError), v)
		}()
	}
}

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0:4", []int{0, 1, 2, 4}},
		{"3:10", []int{3, 6, 10}},
		{"8,1K,1M", []int{8, 1024, 1 << 20}},
		{"1k", []int{1024}},
	}
	for _, tt := range tests {
		got, err := ParseSizes(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if got, err := ParseInts("1,4:16,-2"); err != nil || !slices.Equal(got, []int{1, 4, 8, 16, -2}) {
		t.Errorf("ParseInts: %v %v", got, err)
	}
}

func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"1:4M", "8,1K", "0:0", ":", "1K:1", "9G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSizes(s)
		if err != nil {
			return
		}
		if len(got) == 0 {
			t.Fatalf("%q: empty list without error", s)
		}
		for _, v := range got {
			if v < 0 || v > MaxSize {
				t.Fatalf("%q: size %d out of range", s, v)
			}
		}
	})
}

// TestEchoElidesLongValues: a value beyond MaxEcho keeps its ends and
// counts what was left out, so a message stays a line.
func TestEchoElidesLongValues(t *testing.T) {
	var items []string
	for i := 1; i <= 5000; i++ {
		items = append(items, strconv.Itoa(i))
	}
	list := strings.Join(items, ",")
	tests := []struct {
		name, in string
		want     []string // substrings
		maxLen   int
	}{
		{"short stays whole", "1,2,3", []string{"1,2,3"}, 5},
		{"exactly MaxEcho", strings.Repeat("x", MaxEcho), []string{strings.Repeat("x", MaxEcho)}, MaxEcho},
		{"5000 items", list, []string{"1,2,3,4,5,", " ... (", " of 5000 items left out) ... ", ",4999,5000"}, 200},
		{"one long word", strings.Repeat("y", 10000), []string{"characters left out"}, 200},
		{"long with control characters", strings.Repeat("\x1b", 500), []string{`"\x1b`, "characters left out"}, 800},
		{"multibyte at the cut", strings.Repeat("é", 500), []string{"characters left out"}, 300},
		{"empty", "", []string{`""`}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Echo(tc.in)
			if len(got) > tc.maxLen || !utf8.ValidString(got) {
				t.Errorf("Echo gives %d bytes (valid UTF-8 %v), want at most %d: %q", len(got), utf8.ValidString(got), tc.maxLen, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("Echo = %q, want it to contain %q", got, w)
				}
			}
		})
	}
	// The count is exact: items wholly between the ends.
	got := Echo(list)
	shown := strings.Count(got[:strings.Index(got, " ... (")], ",") + strings.Count(got[strings.LastIndex(got, ") ... "):], ",")
	var left int
	fmt.Sscanf(got[strings.Index(got, " ... (")+6:], "%d", &left)
	if left+shown+1 != 5000 {
		t.Errorf("%d left out + %d shown != 5000 items: %q", left, shown+1, got)
	}
}
