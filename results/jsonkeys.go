package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// CheckJSONKeys refuses a member name of the JSON document data that the
// Go value of type t it decodes into has no field of exactly, and a
// member name given twice in one object, naming the member by its path
// below path ("fit.t_s.valeu"). encoding/json matches a key to a field
// case-insensitively and keeps the last of two values of one key, so a
// hand-added "Value" or a second "min_bytes" would override what the file
// seems to say in silence; an unknown key would be read as absent. A
// map's keys, and the members below a json.RawMessage, an interface or a
// type with its own UnmarshalJSON, are checked for duplicates only. data
// is a document the decoder has read without error; CheckJSONKeys
// leaves syntax errors to it.
func CheckJSONKeys(data []byte, t reflect.Type, path string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkKeys(dec, t, path)
	if _, ok := err.(keyError); !ok {
		return nil
	}
	return err
}

// keyError is what walkKeys refuses; other errors are the decoder's.
type keyError struct{ error }

var (
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// walkKeys reads one value from dec, checking its members against t (nil:
// duplicates only).
func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t == rawMessageType || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	sub := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := k.(string)
			if seen[name] {
				return keyError{fmt.Errorf("field %s: the key is given twice in one object; a file names each key once, and a reader would keep one of the values in silence", Printable(sub(name)))}
			}
			seen[name] = true
			var ft reflect.Type
			if t != nil {
				switch t.Kind() {
				case reflect.Struct:
					var ok bool
					if ft, ok = jsonMember(t, name); !ok {
						return keyError{unknownKey(t, name, sub(name))}
					}
				case reflect.Map:
					ft = t.Elem()
				}
			}
			if err := walkKeys(dec, ft, sub(name)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, et, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// unknownKey words a member name that struct t has no field of.
func unknownKey(t reflect.Type, name, path string) error {
	if exact, ok := jsonMemberFold(t, name); ok {
		return fmt.Errorf("field %s: keys are case-sensitive, and the field is %q (a key in another case would override it in silence)", Printable(path), exact)
	}
	return fmt.Errorf("field %s: no such key here (the keys here: %s); a misspelt or hand-added key would be read as absent", Printable(path), strings.Join(jsonFieldNames(t), ", "))
}
