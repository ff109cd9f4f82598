package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// OperatorEntry is one named operator of a config file's "operators":
//
//	"operators": [{"name": "Ana", "token": "${ANA_TOKEN}"}]
//
// the token, like the servers' secrets, may be written as ${VAR} or
// ${VAR:-default} and is expanded from the environment.
type OperatorEntry struct {
	Name  string `json:"name"`
	Token string `json:"token"`
}

// maxOperators bounds the "operators" list.
const maxOperators = 1000

// LoadOperators reads the "operators" key of the config file at path,
// expanding ${VAR} through lookup (nil: the process environment). A file
// that does not exist has none; a wrong entry is an *Error naming the file
// and the entry, never the token.
func LoadOperators(path string, lookup func(string) (string, bool)) ([]OperatorEntry, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil, nil // Load reports what is wrong with the file
	}
	v, ok := top["operators"]
	if !ok || isNull(v) {
		return nil, nil
	}
	var list []OperatorEntry
	if json.Unmarshal(v, &list) != nil {
		return nil, &Error{File: path, Field: "operators", Msg: `want [{"name": "NAME", "token": "TOKEN or ${VAR}"}, …]`}
	}
	if len(list) > maxOperators {
		return nil, &Error{File: path, Field: "operators", Msg: fmt.Sprintf("more than %d operators", maxOperators)}
	}
	for i := range list {
		field := fmt.Sprintf("operators[%d]", i)
		if list[i].Name == "" || list[i].Token == "" {
			return nil, &Error{File: path, Field: field, Msg: `want {"name": "NAME", "token": "TOKEN or ${VAR}"}, neither empty`}
		}
		tok, err := expander{lookup: lookup}.expand(field+".token", list[i].Token)
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.File = path
			}
			return nil, err
		}
		if tok == "" {
			return nil, &Error{File: path, Field: field + ".token", Msg: "is empty after ${...} expansion"}
		}
		list[i].Token = tok
	}
	return list, nil
}
