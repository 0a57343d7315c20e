package opts

import (
	"encoding"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The tags Bind reads on a configuration's fields:
//
//	flag:"k"             the flag's name (a field without it is not a flag)
//	default:"1,2,4,8"    the default, as it would be typed
//	usage:"..."          the help text
//	value:"file"         names the value in the help ("-out file"): the first
//	                     "file" of the usage text, or the name alone
//	param:"bytes"        the record parameter the field sets (Binding.FlagOfParam)
//	flags:"cal-"         on a struct field: bind its fields, their flags prefixed
//
// Anonymous (embedded) struct fields are bound as if their fields were the
// outer struct's. The field types: bool, string, int, int64, uint64,
// float64, time.Duration; anything whose pointer is a flag.Value or an
// encoding.TextUnmarshaler; the list types of this package; and []T for
// T int, float64, bool, string or a TextUnmarshaler (a list under the list
// rule). Any other type with a flag tag is a programming error (panic).

// Binding is a configuration bound to the flags of a flag set: it knows
// which flag sets which field, so the configuration's errors can be told in
// the flags' terms (Err), and which flags were given.
type Binding struct {
	fs      *flag.FlagSet
	cfg     reflect.Value // the struct
	fields  []*bound
	byField map[string]*bound
	byFlag  map[string]*bound
	raw     map[string]string // the text given to a Var flag, by flag name
}

type bound struct {
	field, flag, param, def string
}

// Bind defines a flag of fs for every tagged field of the struct cfg
// points to, each set to its default, and returns the binding. It panics
// on a field it cannot bind or a default its type refuses: both are
// programming errors.
func Bind(fs *flag.FlagSet, cfg any) *Binding {
	b := &Binding{fs: fs, byField: map[string]*bound{}, byFlag: map[string]*bound{}, raw: map[string]string{}}
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("opts: Bind wants a pointer to a struct, got %T", cfg))
	}
	b.cfg = v.Elem()
	b.bindStruct(v.Elem(), "", "")
	return b
}

// tune applies the run-time help and defaults of the struct at v (Usager,
// Defaulter), its flag names prefixed.
func (b *Binding) tune(v reflect.Value, prefix string) {
	if !v.CanAddr() || !v.Addr().CanInterface() {
		return // an unexported embedded struct: nothing of its own to tune
	}
	cfg := v.Addr().Interface()
	if u, ok := cfg.(Usager); ok {
		for name, text := range u.Usage() {
			if f := b.fs.Lookup(prefix + name); f != nil {
				f.Usage = text
			}
		}
	}
	if d, ok := cfg.(Defaulter); ok {
		for name, def := range d.Defaults() {
			f := b.fs.Lookup(prefix + name)
			if f == nil {
				panic("opts: default of an undefined flag --" + prefix + name)
			}
			if err := f.Value.Set(def); err != nil {
				panic(fmt.Sprintf("opts: default %q of --%s: %v", def, prefix+name, err))
			}
			delete(b.raw, prefix+name)
			f.DefValue = def
		}
	}
}

// Usager is a configuration whose help texts are made at run time (from a
// registry): Usage maps a flag name to its help.
type Usager interface {
	Usage() map[string]string
}

// Defaulter is a configuration whose defaults are made at run time (from a
// registry, or the same shared field with another default): Defaults maps a
// flag name to its default as typed.
type Defaulter interface {
	Defaults() map[string]string
}

// Finish, called after the flag set is parsed, fills the configuration's
// fields of type Given (at any depth of embedded structs) with the fields
// whose flags were given.
func (b *Binding) Finish() {
	g := Given{}
	for _, f := range b.fields {
		if b.Given(f.field) {
			g[f.field] = true
		}
	}
	setGiven(b.cfg, g)
}

func setGiven(v reflect.Value, g Given) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		switch {
		case sf.Type == reflect.TypeFor[Given]() && sf.IsExported():
			f.Set(reflect.ValueOf(g))
		case sf.Anonymous && sf.Type.Kind() == reflect.Struct:
			setGiven(f, g)
		}
	}
}

func (b *Binding) bindStruct(v reflect.Value, path, prefix string) {
	defer b.tune(v, prefix) // after the fields: an outer struct's tune comes later and wins
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		fv := v.Field(i)
		name := sf.Name
		if path != "" {
			name = path + "." + sf.Name
		}
		if p, ok := sf.Tag.Lookup("flags"); ok {
			b.bindStruct(fv, name, prefix+p)
			continue
		}
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("flag") == "" {
			b.bindStruct(fv, path, prefix) // embedded: its fields are ours
			continue
		}
		fl := sf.Tag.Get("flag")
		if fl == "" {
			continue
		}
		if !sf.IsExported() {
			panic("opts: unexported field " + name + " has a flag tag")
		}
		fl = prefix + fl
		bf := &bound{field: name, flag: fl, param: sf.Tag.Get("param"), def: sf.Tag.Get("default")}
		b.define(fv, bf, valueName(sf.Tag.Get("usage"), sf.Tag.Get("value")))
		b.fields = append(b.fields, bf)
		b.byField[name] = bf
		b.byFlag[fl] = bf
	}
}

// valueName marks name in usage as the flag package's name of the value:
// its first whole-word occurrence in backquotes (flag.UnquoteUsage).
func valueName(usage, name string) string {
	if name == "" {
		return usage
	}
	for i := 0; ; {
		j := strings.Index(usage[i:], name)
		if j < 0 {
			break
		}
		j += i
		end := j + len(name)
		if (j == 0 || !isWordByte(usage[j-1])) && (end == len(usage) || !isWordByte(usage[end])) {
			return usage[:j] + "`" + name + "`" + usage[end:]
		}
		i = end
	}
	return "`" + name + "`: " + usage
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// define defines the flag of one field and sets its default.
func (b *Binding) define(v reflect.Value, bf *bound, usage string) {
	fs, name, def := b.fs, bf.flag, bf.def
	must := func(err error) {
		if err != nil {
			panic(fmt.Sprintf("opts: default %q of --%s: %v", def, name, err))
		}
	}
	p := v.Addr().Interface()
	switch x := p.(type) {
	case flag.Value:
		fs.Var(&rawValue{x, b, name}, name, usage)
	case *bool:
		d := false
		if def != "" {
			var err error
			d, err = strconv.ParseBool(def)
			must(err)
		}
		fs.BoolVar(x, name, d, usage)
		return
	case *string:
		fs.StringVar(x, name, def, usage)
		return
	case *int, *int64, *uint64, *float64, *time.Duration:
		switch y := x.(type) {
		case *int:
			fs.IntVar(y, name, 0, usage)
		case *int64:
			fs.Int64Var(y, name, 0, usage)
		case *uint64:
			fs.Uint64Var(y, name, 0, usage)
		case *float64:
			fs.Float64Var(y, name, 0, usage)
		case *time.Duration:
			fs.DurationVar(y, name, 0, usage)
		}
		// Keep the text as typed: a refusal echoes 9.3e9, not 9.3e+09.
		fl := fs.Lookup(name)
		fl.Value = &rawValue{fl.Value, b, name}
	case encoding.TextUnmarshaler:
		fs.Var(&rawValue{&textValue{v: v, u: x}, b, name}, name, usage)
	default:
		switch {
		case v.Kind() == reflect.Slice:
			lv := newListValue(v)
			if lv == nil {
				panic(fmt.Sprintf("opts: field of --%s: cannot bind a %s", name, v.Type()))
			}
			fs.Var(&rawValue{lv, b, name}, name, usage)
		default:
			panic(fmt.Sprintf("opts: field of --%s: cannot bind a %s", name, v.Type()))
		}
	}
	f := fs.Lookup(name)
	if def != "" {
		must(f.Value.Set(def))
		delete(b.raw, name) // a default is not given text
	}
	f.DefValue = f.Value.String()
	if str, ok := f.Value.(interface{ IsString() bool }); def != "" || ok && str.IsString() {
		f.DefValue = def // a string-like value without a default shows none
	}
}

// rawValue keeps the text a flag was given, as typed, for messages (a
// list prints back in canonical form: 1:8 as 1,2,4,8).
type rawValue struct {
	flag.Value
	b    *Binding
	name string
}

func (r *rawValue) Set(s string) error {
	r.b.raw[r.name] = s
	err := r.Value.Set(s)
	if ib := (*IntBoundError)(nil); errors.As(err, &ib) {
		return r.intBound(ib)
	}
	return err
}

// intBound words an item beyond 2G-1 in the flag's terms: what the flag
// holds (its help's first words) and its bound, since a list of ints may
// hold packets, pairs or bytes.
func (r *rawValue) intBound(e *IntBoundError) error {
	what := ""
	if f := r.b.fs.Lookup(r.name); f != nil {
		what = flagWhat(f.Usage)
	}
	flag := "--" + r.name
	if what != "" {
		flag += " (" + what + ")"
	}
	if e.Range {
		return fmt.Errorf("a range of %s ends at most at %d (2G less 1): %s is more; accepted forms: %s", flag, MaxSize, Echo(e.Value()), IntsForm)
	}
	return fmt.Errorf("%s is at most %d (2G less 1): %s is more; accepted forms: %s", flag, MaxSize, Echo(e.Value()), IntsForm)
}

// flagWhat is what a flag holds, from its help: its first clause (up to
// "; "), without the accepted forms that follow it (": a list ...").
func flagWhat(usage string) string {
	u, _, _ := strings.Cut(strings.ReplaceAll(usage, "`", ""), "; ")
	for _, form := range []string{"a list", "a power", "a comma", "a range", "LO:HI", "list", "range"} {
		for _, sep := range []string{": ", " (", ", ", " "} {
			if i := strings.Index(u, sep+form); i >= 0 {
				u = u[:i]
			}
		}
	}
	return strings.TrimSpace(u)
}

func (r *rawValue) String() string {
	if r == nil || r.Value == nil {
		return ""
	}
	return r.Value.String()
}

// IsString reports whether the value prints as a string in usage texts.
func (r *rawValue) IsString() bool {
	s, ok := r.Value.(interface{ IsString() bool })
	return ok && s.IsString()
}

// Get is the defined value's (a flag.Getter's), for the messages that
// word a parse error by the flag's type; nil for one that is no Getter.
func (r *rawValue) Get() any {
	if g, ok := r.Value.(flag.Getter); ok {
		return g.Get()
	}
	return nil
}

// Unwrap is the flag.Value the field defines.
func (r *rawValue) Unwrap() flag.Value { return r.Value }

// textValue is a flag of a TextUnmarshaler field.
type textValue struct {
	v reflect.Value
	u encoding.TextUnmarshaler
}

func (t *textValue) Set(s string) error { return t.u.UnmarshalText([]byte(s)) }
func (t *textValue) String() string {
	if t == nil || !t.v.IsValid() {
		return ""
	}
	if s, ok := t.v.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprint(t.v.Interface())
}
func (t *textValue) IsString() bool { return true }

// listValue is a flag of a []T field under the list rule.
type listValue struct {
	v     reflect.Value
	parse func(string) (reflect.Value, error)
	form  string
}

func newListValue(v reflect.Value) *listValue {
	et := v.Type().Elem()
	switch {
	case et.Kind() == reflect.Int && et.PkgPath() == "":
		return &listValue{v: v, form: IntsForm}
	case et.Kind() == reflect.Float64 && et.PkgPath() == "":
		return &listValue{v: v, form: FloatsForm}
	case et.Kind() == reflect.Bool && et.PkgPath() == "":
		return &listValue{v: v, form: BoolsForm}
	case et.Kind() == reflect.String && et.PkgPath() == "":
		return &listValue{v: v, form: "a comma list"}
	case reflect.PointerTo(et).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		return &listValue{v: v, form: "a comma list", parse: func(s string) (reflect.Value, error) {
			e := reflect.New(et)
			err := e.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
			return e.Elem(), err
		}}
	}
	return nil
}

func (l *listValue) Set(s string) error {
	var items reflect.Value
	switch l.form {
	case IntsForm:
		x, err := ParseInts(s)
		if err != nil {
			return err
		}
		items = reflect.ValueOf(x)
	case FloatsForm:
		x, err := ParseFloats(s)
		if err != nil {
			return err
		}
		items = reflect.ValueOf(x)
	case BoolsForm:
		x, err := ParseBools(s)
		if err != nil {
			return err
		}
		items = reflect.ValueOf(x)
	default:
		parse := l.parse
		if parse == nil {
			parse = func(s string) (reflect.Value, error) { return reflect.ValueOf(s), nil }
		}
		words, err := Items(s, l.form)
		if err != nil {
			return err
		}
		items = reflect.MakeSlice(reflect.SliceOf(l.v.Type().Elem()), 0, len(words))
		seen := map[string]bool{}
		for _, w := range words {
			e, err := parse(w)
			if err != nil {
				return err
			}
			key := fmt.Sprint(e.Interface())
			if seen[key] {
				return fmt.Errorf("%s is listed twice; list each value once", key)
			}
			seen[key] = true
			items = reflect.Append(items, e)
		}
	}
	out := reflect.MakeSlice(l.v.Type(), items.Len(), items.Len())
	for i := range items.Len() {
		out.Index(i).Set(items.Index(i).Convert(l.v.Type().Elem()))
	}
	l.v.Set(out)
	return nil
}

func (l *listValue) String() string {
	if l == nil || !l.v.IsValid() {
		return ""
	}
	s := make([]string, l.v.Len())
	for i := range s {
		s[i] = fmt.Sprint(l.v.Index(i).Interface())
	}
	return strings.Join(s, ",")
}
func (l *listValue) IsString() bool { return true }

// Flag is the flag that sets field ("" when no flag does).
func (b *Binding) Flag(field string) string {
	if f := b.byField[field]; f != nil {
		return f.flag
	}
	return ""
}

// FlagOfParam is the flag whose field sets record parameter param ("" when
// none does).
func (b *Binding) FlagOfParam(param string) string {
	for _, f := range b.fields {
		if f.param == param {
			return f.flag
		}
	}
	return ""
}

// Given reports whether the flag of field was given on the command line
// (after the flag set was parsed).
func (b *Binding) Given(field string) bool {
	f := b.byField[field]
	if f == nil {
		return false
	}
	given := false
	b.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == f.flag })
	return given
}

// Text is the value of field's flag as given, or its default: what a
// message quotes.
func (b *Binding) Text(field string) string {
	f := b.byField[field]
	if f == nil {
		return ""
	}
	fl := b.fs.Lookup(f.flag)
	text := fl.DefValue
	b.fs.Visit(func(g *flag.Flag) {
		if g.Name == f.flag {
			text = g.Value.String()
		}
	})
	if t, ok := b.raw[f.flag]; ok {
		text = t
	}
	return text
}

// FlagText is "--name value" for the flag of field, as Text gives it, or
// "--name" alone when it was left at an empty default.
func (b *Binding) FlagText(field string) string {
	name := b.Flag(field)
	if t := b.Text(field); t != "" {
		return "--" + name + " " + Echo(t)
	}
	return "--" + name
}

// Err tells err in the flags' terms: a *FieldError of a bound field becomes
// bad input that reads "--k 0,1: 0: must be positive", its {Field}
// references the flags; any other error comes back unchanged.
func (b *Binding) Err(err error) error {
	var ce *ConflictError
	if errors.As(err, &ce) && b.byField[ce.Field] != nil && b.byField[ce.With] != nil {
		return Badf("--%s with --%s: %s", b.Flag(ce.Field), b.Flag(ce.With), ce.Names(b.flagRef))
	}
	var bi *BadInput
	if errors.As(err, &bi) && refRE.MatchString(bi.msg) {
		known := true
		bi.Names(func(f string) string { known = known && b.byField[f] != nil; return "" })
		if known {
			return &BadInput{msg: bi.Names(b.flagRef)}
		}
	}
	var fe *FieldError
	if err == nil || !errors.As(err, &fe) {
		return err
	}
	if b.byField[fe.Field] == nil {
		return err
	}
	reason := fe.Names(b.flagRef)
	text := b.Text(fe.Field)
	if item, role, ok := rangeItem(text, fe.Value); ok {
		return Badf("--%s %s: %s %s%s", b.Flag(fe.Field), Echo(item), role, fe.Value, reasonAfter(reason))
	}
	if fe.Item {
		text = fe.Value
	}
	head := "--" + b.Flag(fe.Field) + " " + Echo(text)
	if fe.Value != "" && fe.Value != text && !b.printsAs(fe.Field, fe.Value) {
		return Badf("%s: %s: %s", head, fe.Value, reason)
	}
	return Badf("%s: %s", head, reason)
}

// rangeItem finds the value v of a refusal in a range LO:HI of the list
// text as typed, when v is no item of its own there: the range as given
// ("0:2", not the "0" it starts with, nor the whole list) and where v is
// in it ("its start", "its end", "its value"), for "--k 0:2: its start 0
// is not positive".
func rangeItem(text, v string) (item, role string, ok bool) {
	items := strings.Split(text, ",")
	for _, it := range items {
		if strings.TrimSpace(it) == v {
			return "", "", false
		}
	}
	for _, it := range items {
		it = strings.TrimSpace(it)
		if !strings.Contains(it, ":") {
			continue
		}
		vals, err := ParseSizes(it)
		if err != nil {
			continue
		}
		for i, x := range vals {
			if strconv.Itoa(x) != v {
				continue
			}
			switch i {
			case 0:
				return it, "its start", true
			case len(vals) - 1:
				return it, "its end", true
			}
			return it, "its value", true
		}
	}
	return "", "", false
}

// reasonAfter joins a reason to the value it is about: "0 is not
// positive" or "0 must be ..." when it begins with its verb, "0: k = 0:
// ..." otherwise.
func reasonAfter(reason string) string {
	for _, verb := range []string{"is ", "must ", "are "} {
		if strings.HasPrefix(reason, verb) {
			return " " + reason
		}
	}
	return ": " + reason
}

// printsAs reports whether v is how field's parsed value prints: the
// value as given, reformatted (9.3e9 as 9.3e+09), which the message need
// not repeat after the text typed.
func (b *Binding) printsAs(field, v string) bool {
	fl := b.fs.Lookup(b.Flag(field))
	return fl != nil && fl.Value.String() == v
}

// flagRef writes a field reference as its flag.
func (b *Binding) flagRef(field string) string {
	if fl := b.Flag(field); fl != "" {
		return "--" + fl
	}
	return field
}

// Fields lists the bound fields' paths in declaration order.
func (b *Binding) Fields() []string {
	out := make([]string, len(b.fields))
	for i, f := range b.fields {
		out[i] = f.field
	}
	return out
}

// FillDefaults sets every tagged field of the struct cfg points to that
// holds its zero value to the field's default, so that a library caller's
// zero configuration means what the command line's defaults mean. A field
// whose zero value is meaningful (0 repetitions) is the library's to treat
// before or after.
func FillDefaults(cfg any) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("opts: FillDefaults wants a pointer to a struct, got %T", cfg))
	}
	def := reflect.New(v.Elem().Type())
	b := Bind(flag.NewFlagSet("defaults", flag.ContinueOnError), def.Interface())
	for _, f := range b.fields {
		if f.def == "" {
			continue
		}
		dst, src := fieldByPath(v.Elem(), f.field), fieldByPath(def.Elem(), f.field)
		if dst.IsZero() {
			dst.Set(src)
		}
	}
}

func fieldByPath(v reflect.Value, path string) reflect.Value {
	for _, name := range strings.Split(path, ".") {
		v = v.FieldByName(name)
	}
	return v
}

// FlagTextOfFlag is FlagText of the field whose flag is name ("--sizes
// 1G" as typed, not the 1073741824 it parses to), or "" when no field of
// this binding has that flag.
func (b *Binding) FlagTextOfFlag(name string) string {
	if f := b.byFlag[name]; f != nil {
		return b.FlagText(f.field)
	}
	return ""
}

// FlagTextOfParam is FlagText of the field that sets record parameter
// param, or "" when none does.
func (b *Binding) FlagTextOfParam(param string) string {
	for _, f := range b.fields {
		if f.param == param {
			return b.FlagText(f.field)
		}
	}
	return ""
}
