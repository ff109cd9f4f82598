package agent

import (
	"fmt"
	"slices"
)

// ToolSet is an ordered collection of tools with unique names. The order is
// the order tools are offered to the model, which keeps requests (and their
// prompt caches) stable from one turn to the next.
type ToolSet struct {
	tools []*Tool
	index map[string]int
}

// NewToolSet returns a set of the given tools in order. Two tools with the
// same name are an error: silently dropping one would be a mystery later.
func NewToolSet(tools ...*Tool) (*ToolSet, error) {
	s := &ToolSet{index: make(map[string]int, len(tools))}
	for _, t := range tools {
		if err := s.Add(t); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// MustToolSet is NewToolSet for static tool lists; it panics on a duplicate.
func MustToolSet(tools ...*Tool) *ToolSet {
	s, err := NewToolSet(tools...)
	if err != nil {
		panic(err)
	}
	return s
}

// Add appends a tool. A nil tool, an empty name or a duplicate is an error.
func (s *ToolSet) Add(t *Tool) error {
	if t == nil || t.Name == "" {
		return fmt.Errorf("tool has no name")
	}
	if t.Execute == nil {
		return fmt.Errorf("tool %s has no Execute function", t.Name)
	}
	if s.index == nil {
		s.index = map[string]int{}
	}
	if _, dup := s.index[t.Name]; dup {
		return fmt.Errorf("duplicate tool name %q", t.Name)
	}
	s.index[t.Name] = len(s.tools)
	s.tools = append(s.tools, t)
	return nil
}

// Get returns the tool with the given name.
func (s *ToolSet) Get(name string) (*Tool, bool) {
	if s == nil {
		return nil, false
	}
	i, ok := s.index[name]
	if !ok {
		return nil, false
	}
	return s.tools[i], true
}

// Len returns the number of tools.
func (s *ToolSet) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tools)
}

// Tools returns the tools in order. The slice is a copy; the tools are not.
func (s *ToolSet) Tools() []*Tool {
	if s == nil {
		return nil
	}
	return slices.Clone(s.tools)
}

// Names returns the tool names in order.
func (s *ToolSet) Names() []string {
	if s == nil {
		return nil
	}
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name
	}
	return names
}
