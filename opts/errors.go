package opts

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// FieldError is a value of one configuration field that the configuration
// does not accept. Field is the field's path in the configuration struct
// (its Go names, dotted for nested structs: "K", "Cal.K"); Value is the
// offending value as text (an item of a list, or the whole value); Reason
// says what is wrong and what is accepted. Reason may name other fields of
// the same configuration as {Field}: Error writes them as the field names,
// a Binding as their flags.
type FieldError struct {
	Field  string
	Value  string
	Reason string
	// Item, for a list, says the error is about the one value, so that a
	// message names it alone ("--ranks 8: ...") rather than the list.
	Item bool
}

// Field returns a *FieldError for field with value v (formatted with %v)
// and the reason format, args.
func Field(field string, v any, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: fmt.Sprint(v), Reason: fmt.Sprintf(format, args...)}
}

// Item returns a *FieldError about one value v of a list field.
func Item(field string, v any, format string, args ...any) *FieldError {
	e := Field(field, v, format, args...)
	e.Item = true
	return e
}

func (e *FieldError) Error() string {
	reason := e.Names(func(f string) string { return f })
	if e.Value == "" {
		return e.Field + ": " + reason
	}
	return fmt.Sprintf("%s = %s: %s", e.Field, e.Value, reason)
}

// refRE matches the {Field} references of a reason.
var refRE = regexp.MustCompile(`\{([A-Za-z][A-Za-z0-9_.]*)\}`)

// Names is the reason with every {Field} reference written by name.
func (e *FieldError) Names(name func(field string) string) string {
	return refRE.ReplaceAllStringFunc(e.Reason, func(m string) string {
		return name(m[1 : len(m)-1])
	})
}

// BadInput is bad input that names no single field: a world of the wrong
// size, arguments that exclude each other. Its message is complete; it may
// name fields as {Field}, which Error writes as the field names and a
// Binding as their flags.
type BadInput struct{ msg string }

func (e *BadInput) Error() string { return e.Names(func(f string) string { return f }) }

// Names is the message with every {Field} reference written by name.
func (e *BadInput) Names(name func(field string) string) string {
	return refRE.ReplaceAllStringFunc(e.msg, func(m string) string { return name(m[1 : len(m)-1]) })
}

// Badf returns a *BadInput with the formatted message.
func Badf(format string, args ...any) error {
	return &BadInput{msg: fmt.Sprintf(format, args...)}
}

// IsBadInput reports whether err (or an error it wraps) is bad input: a
// *FieldError or a *BadInput. Bad input is the caller's to correct; every
// other error is a failure of the run.
func IsBadInput(err error) bool {
	var f *FieldError
	var b *BadInput
	var c *ConflictError
	return errors.As(err, &f) || errors.As(err, &b) || errors.As(err, &c)
}

// Validator is a configuration that checks itself: Validate returns nil or
// an error naming the field (a *FieldError) or the rule (a *BadInput).
type Validator interface {
	Validate() error
}

// Prefix returns err with every field it names moved under the struct
// field parent ("K" becomes "Cal.K"), for a configuration that validates
// a nested one; other errors come back as they are.
func Prefix(parent string, err error) error {
	var f *FieldError
	if !errors.As(err, &f) {
		return err
	}
	g := *f
	g.Field = parent + "." + f.Field
	g.Reason = refRE.ReplaceAllString(f.Reason, "{"+parent+".$1}")
	return &g
}

// OneOf is a reason for a value outside a set of names: "accepted: a, b or c".
func OneOf(names []string) string {
	switch len(names) {
	case 0:
		return "nothing is accepted"
	case 1:
		return "accepted: " + names[0]
	}
	return "accepted: " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ConflictError is a field given together with another that excludes it
// (or that it needs absent): "MinReps with OSU: OSU fixes the repetitions".
type ConflictError struct {
	Field, With string
	Reason      string // may name fields as {Field}
}

// Conflict returns a *ConflictError.
func Conflict(field, with, format string, args ...any) *ConflictError {
	return &ConflictError{Field: field, With: with, Reason: fmt.Sprintf(format, args...)}
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s with %s: %s", e.Field, e.With, e.Names(func(f string) string { return f }))
}

// Names is the reason with every {Field} reference written by name.
func (e *ConflictError) Names(name func(field string) string) string {
	return refRE.ReplaceAllStringFunc(e.Reason, func(m string) string { return name(m[1 : len(m)-1]) })
}

// Given is the set of fields of a configuration that were set explicitly
// (by a flag on the command line, or by a caller who fills it), for the
// rules that depend on what was asked for rather than on the value: a
// field of this type is filled by Binding.Finish.
type Given map[string]bool

// Has reports whether field was set explicitly.
func (g Given) Has(field string) bool { return g[field] }
