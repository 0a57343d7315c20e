// Package opts is the vocabulary in which commcost's libraries state what
// they accept and the command line binds it:
//
//   - a configuration is a struct whose fields carry their flag name,
//     default and help in tags (`flag:"k" default:"1,2,4,8" usage:"..."`);
//     Bind turns them into flags of a flag.FlagSet, and Defaults fills a
//     zero configuration with the same defaults, so that a library caller
//     and the command line start from one owner of each default;
//   - a configuration checks itself (Validator): Validate returns a
//     *FieldError that names the field, the value and what is accepted,
//     never a flag; the command line maps the field to its flag through the
//     Binding, so one rule is checked in one place and its message reads
//     "--k 0: must be positive" on the command line and "K = 0: must be
//     positive" to a library caller;
//   - bad input that names no field (a world of the wrong size) is a
//     BadInput; IsBadInput tells both from a runtime failure;
//   - list values follow one rule everywhere (Ints, Sizes, Floats, Bools,
//     Strings, and []T of any encoding.TextUnmarshaler): items separated by
//     commas, kept in the order given, an empty list, an empty item or a
//     value listed twice (also under two spellings, 1K and 1024) refused;
//     sizes take K, M and G = 2^10, 2^20, 2^30.
//
// The package imports nothing of commcost, so every library can use it.
package opts
