// Package elicit reads an elicitation's requested schema into a form a host
// can ask for and check, and holds the elicitors that need no person.
package elicit

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An elicitation form is a flat object schema of primitive fields
// (strings, numbers, booleans, single- and multiple-choice enums). Form
// and FormField read it into what a host needs to ask for each field and
// to check the answer before it is sent, whatever shows the form (the
// chat's terminal, agentapp mcp --elicit).

// Bounds of a form a server may ask for: a schema is the server's to
// write, the user's terminal is not.
const (
	maxFormFields  = 50
	maxFormOptions = 100
)

// Form is the fields of an elicitation's requested schema.
type Form struct {
	Fields []FormField
}

// FormOption is one choice of an enum field.
type FormOption struct {
	Value string
	// Title is what the user sees (SEP-1330 titled enums, or the legacy
	// enumNames); the value when the schema gives none.
	Title string
}

// FormField is one property of the requested schema.
type FormField struct {
	Name        string
	Title       string // "" when the schema gives none
	Description string
	// Type is "string", "number", "integer", "boolean" or "array" (a
	// multiple choice).
	Type     string
	Format   string // email, uri, date, date-time for strings
	Required bool
	// Default is the schema's default (SEP-1034), nil when it has none.
	Default any
	// Options are the choices of an enum (single choice for a string,
	// multiple for an array).
	Options []FormOption

	MinLength, MaxLength *int
	Minimum, Maximum     *float64
	MinItems, MaxItems   *int
}

// Label is what the form shows for the field: its title, else its name.
func (f FormField) Label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// ParseForm reads a requested schema (as the SDK decoded it) into a Form.
// Required fields come first, then the others, each group by name: the
// decoded schema has lost the server's order.
func ParseForm(schema any) (*Form, error) {
	if schema == nil {
		return &Form{}, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("the requested schema cannot be read: %w", err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("the requested schema is not an object schema: %w", err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("the requested schema is of type %q; a form needs an object", s.Type)
	}
	if len(s.Properties) > maxFormFields {
		return nil, fmt.Errorf("the requested schema has %d fields; at most %d are shown", len(s.Properties), maxFormFields)
	}
	form := &Form{}
	for name, p := range s.Properties {
		f, err := parseField(name, p)
		if err != nil {
			return nil, err
		}
		f.Required = slices.Contains(s.Required, name)
		form.Fields = append(form.Fields, f)
	}
	slices.SortFunc(form.Fields, func(a, b FormField) int {
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return form, nil
}

type wireOption struct {
	Const *string `json:"const"`
	Title string  `json:"title"`
}

type wireField struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	Default     json.RawMessage `json:"default"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []wireOption    `json:"oneOf"`
	AnyOf       []wireOption    `json:"anyOf"`
	Items       *wireField      `json:"items"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
}

// options reads the choices of an enum, titled (oneOf/anyOf of const and
// title, SEP-1330), legacy titled (enumNames) or plain.
func (w *wireField) options() ([]FormOption, error) {
	var out []FormOption
	titled := w.OneOf
	if len(titled) == 0 {
		titled = w.AnyOf
	}
	for _, o := range titled {
		if o.Const == nil {
			return nil, fmt.Errorf("a titled choice has no const")
		}
		out = append(out, FormOption{Value: *o.Const, Title: o.Title})
	}
	for i, v := range w.Enum {
		o := FormOption{Value: v}
		if i < len(w.EnumNames) {
			o.Title = w.EnumNames[i]
		}
		out = append(out, o)
	}
	if len(out) > maxFormOptions {
		return nil, fmt.Errorf("%d choices; at most %d are shown", len(out), maxFormOptions)
	}
	for i := range out {
		if out[i].Title == "" {
			out[i].Title = out[i].Value
		}
	}
	return out, nil
}

func parseField(name string, raw json.RawMessage) (FormField, error) {
	var w wireField
	if err := json.Unmarshal(raw, &w); err != nil {
		return FormField{}, fmt.Errorf("field %q of the requested schema cannot be read: %w", textsafe.Preview(name, 60), err)
	}
	f := FormField{
		Name: name, Title: w.Title, Description: w.Description, Type: w.Type, Format: w.Format,
		MinLength: w.MinLength, MaxLength: w.MaxLength, Minimum: w.Minimum, Maximum: w.Maximum,
		MinItems: w.MinItems, MaxItems: w.MaxItems,
	}
	bad := func(format string, a ...any) (FormField, error) {
		return FormField{}, fmt.Errorf("field %q of the requested schema: %s", textsafe.Preview(name, 60), fmt.Sprintf(format, a...))
	}
	var err error
	switch w.Type {
	case "", "string":
		f.Type = "string"
		if f.Options, err = w.options(); err != nil {
			return bad("%v", err)
		}
	case "number", "integer", "boolean":
	case "array":
		if w.Items == nil {
			return bad("a multiple choice needs items with the choices")
		}
		if f.Options, err = w.Items.options(); err != nil {
			return bad("%v", err)
		}
		if len(f.Options) == 0 {
			return bad("a multiple choice needs items with enum, oneOf or anyOf")
		}
	default:
		return bad("type %q is not one a form can ask for (string, number, integer, boolean, array of choices)", w.Type)
	}
	if len(w.Default) > 0 && string(w.Default) != "null" {
		var d any
		if err := json.Unmarshal(w.Default, &d); err != nil {
			return bad("the default cannot be read")
		}
		if d, err = f.normalize(d); err != nil {
			return bad("the default %s is not valid: %v", textsafe.Preview(string(w.Default), 60), err)
		}
		f.Default = d
	}
	return f, nil
}

// normalize checks a value of the field's type (as JSON decodes it) and
// returns it in the form it is sent.
func (f FormField) normalize(v any) (any, error) {
	switch f.Type {
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, fmt.Errorf("want true or false")
		}
		return b, nil
	case "number", "integer":
		n, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("want a number")
		}
		return f.checkNumber(n)
	case "array":
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("want a list of choices")
		}
		var vals []string
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of choices")
			}
			vals = append(vals, s)
		}
		return f.checkChoices(vals)
	default:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want text")
		}
		return f.checkString(s)
	}
}

// Parse reads what the user typed for the field and checks it against the
// schema. Empty input is the default, or absent (nil, nil) for an optional
// field without one; a required field without a default needs an answer.
// A boolean takes y/yes/true or n/no/false; a choice its number in
// Options, its value or its title; a multiple choice those separated by
// commas.
func (f FormField) Parse(input string) (any, error) {
	input = strings.TrimSpace(input)
	if input == "" {
		if f.Default != nil {
			return f.Default, nil
		}
		if f.Required {
			return nil, fmt.Errorf("%s is required", f.Label())
		}
		return nil, nil
	}
	switch f.Type {
	case "boolean":
		switch strings.ToLower(input) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, fmt.Errorf("answer y or n")
	case "number", "integer":
		n, err := strconv.ParseFloat(input, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return nil, fmt.Errorf("want a number")
		}
		return f.checkNumber(n)
	case "array":
		var vals []string
		for _, part := range strings.Split(input, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			v, err := f.choice(part)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
		}
		return f.checkChoices(vals)
	default:
		if len(f.Options) > 0 {
			v, err := f.choice(input)
			if err != nil {
				return nil, err
			}
			return v, nil
		}
		return f.checkString(input)
	}
}

// choice finds one option by its number (from 1), value or title.
func (f FormField) choice(s string) (string, error) {
	if n, err := strconv.Atoi(s); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, nil
	}
	for _, o := range f.Options {
		if o.Value == s || strings.EqualFold(o.Title, s) {
			return o.Value, nil
		}
	}
	return "", fmt.Errorf("%q is not one of the choices; give its number (1-%d)", textsafe.Preview(s, 40), len(f.Options))
}

func (f FormField) checkChoices(vals []string) (any, error) {
	for _, v := range vals {
		if !slices.ContainsFunc(f.Options, func(o FormOption) bool { return o.Value == v }) {
			return nil, fmt.Errorf("%q is not one of the choices", textsafe.Preview(v, 40))
		}
	}
	if f.MinItems != nil && len(vals) < *f.MinItems {
		return nil, fmt.Errorf("choose at least %d", *f.MinItems)
	}
	if f.MaxItems != nil && len(vals) > *f.MaxItems {
		return nil, fmt.Errorf("choose at most %d", *f.MaxItems)
	}
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out, nil
}

func (f FormField) checkNumber(n float64) (any, error) {
	if f.Type == "integer" && n != math.Trunc(n) {
		return nil, fmt.Errorf("want a whole number")
	}
	if f.Minimum != nil && n < *f.Minimum {
		return nil, fmt.Errorf("want at least %v", *f.Minimum)
	}
	if f.Maximum != nil && n > *f.Maximum {
		return nil, fmt.Errorf("want at most %v", *f.Maximum)
	}
	if f.Type == "integer" {
		return int64(n), nil
	}
	return n, nil
}

func (f FormField) checkString(s string) (any, error) {
	if len(f.Options) > 0 {
		if !slices.ContainsFunc(f.Options, func(o FormOption) bool { return o.Value == s }) {
			return nil, fmt.Errorf("%q is not one of the choices", textsafe.Preview(s, 40))
		}
		return s, nil
	}
	n := len([]rune(s))
	if f.MinLength != nil && n < *f.MinLength {
		return nil, fmt.Errorf("want at least %d characters", *f.MinLength)
	}
	if f.MaxLength != nil && n > *f.MaxLength {
		return nil, fmt.Errorf("want at most %d characters", *f.MaxLength)
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return nil, fmt.Errorf("want an e-mail address like name@example.com")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return nil, fmt.Errorf("want a URL like https://example.com")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, fmt.Errorf("want a date as YYYY-MM-DD")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return nil, fmt.Errorf("want a date and time as 2006-01-02T15:04:05Z")
		}
	}
	return s, nil
}

// defaults returns the answer made of the schema's defaults, and the
// required fields that have none (so the defaults alone cannot answer).
func (f *Form) defaults() (content map[string]any, missing []string) {
	content = map[string]any{}
	for _, fl := range f.Fields {
		switch {
		case fl.Default != nil:
			content[fl.Name] = fl.Default
		case fl.Required:
			missing = append(missing, fl.Name)
		}
	}
	return content, missing
}

// DefaultsElicitor answers without asking anyone (agentapp mcp --elicit
// defaults): a form is accepted with the schema's defaults, or declined
// when a required field has none; a URL is declined, since nobody is
// there to open it. Each decision is logged (a nil Logger discards).
type DefaultsElicitor struct{ Logger *slog.Logger }

// Elicit implements Elicitor.
func (d DefaultsElicitor) Elicit(_ context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if p.Mode == "url" || p.URL != "" {
		log.Warn(fmt.Sprintf("MCP server %s asks to open the URL %s; declined, since defaults answer forms only", server, textsafe.Preview(p.URL, 200)))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	form, err := ParseForm(p.RequestedSchema)
	if err != nil {
		return nil, err
	}
	content, missing := form.defaults()
	if len(missing) > 0 {
		log.Warn(fmt.Sprintf("MCP server %s asks for a form whose required fields %s have no defaults; declined (answer it on a terminal with --elicit ask)", server, strings.Join(missing, ", ")))
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	log.Info(fmt.Sprintf("MCP server %s asked for a form; answered with its defaults", server))
	return &mcp.ElicitResult{Action: "accept", Content: content}, nil
}

// DecliningElicitor declines every elicitation (agentapp mcp off a
// terminal, or --elicit decline), logging each.
type DecliningElicitor struct{ Logger *slog.Logger }

// Elicit implements Elicitor.
func (d DecliningElicitor) Elicit(_ context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if d.Logger != nil {
		d.Logger.Info(fmt.Sprintf("MCP server %s asked for input (%s); declined (--elicit ask answers on a terminal)", server, textsafe.Preview(p.Message, 200)))
	}
	return &mcp.ElicitResult{Action: "decline"}, nil
}
