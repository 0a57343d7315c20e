// Package cli is the machinery of commcost's command line: the tree of
// subcommands, registered once from the file of each (Register, as
// database/sql registers drivers), from which the dispatcher, every usage
// text and the README's subcommand table are made; flag sets whose errors
// are bad input naming the flag (NewFlagSet, Parse); and the binding of a
// library's configuration to flags (package opts), so that the library
// validates and the command line only maps a field to its flag.
//
// Bad input is an *opts.BadInput or *opts.FieldError (exit status 2); the
// exit status and the one message per job are package job's.
package cli
