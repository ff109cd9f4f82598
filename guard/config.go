package guard

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Environment variables read by FromEnv.
const (
	EnvAllowlist = "AGENT_GUARD_ALLOWLIST"
	EnvConfirm   = "AGENT_GUARD_CONFIRM"
	EnvPII       = "AGENT_GUARD_PII"
	EnvInput     = "AGENT_GUARD_INPUT"
	// EnvMCPStrict makes local tools win name clashes with MCP tools. It
	// is read here, with the other switches, so that one reading of the
	// environment both reports it and decides the chat's merge.
	EnvMCPStrict = "AGENT_GUARD_MCP_STRICT"
	EnvAuditLog  = "AGENT_AUDIT_LOG"
)

// DefaultAuditFile is the audit log's file name in the data directory when
// AGENT_AUDIT_LOG is not set.
const DefaultAuditFile = "audit.log"

// Config says which guards are on. The zero value has every guard off.
type Config struct {
	// Allowlist, when not empty, is the only MCP tools that may be called
	// (AGENT_GUARD_ALLOWLIST); the others are refused.
	Allowlist []string
	// Confirm lists the MCP tools the user must approve before each call
	// (AGENT_GUARD_CONFIRM).
	Confirm []string
	// PII masks phone numbers, national ids and bank cards in MCP tool
	// output and knowledge-base hits (AGENT_GUARD_PII).
	PII bool
	// Input scans user messages for prompt injection (AGENT_GUARD_INPUT).
	Input bool
	// MCPStrict makes local tools win name clashes with MCP tools
	// (AGENT_GUARD_MCP_STRICT). It is read here to be reported with the
	// other guards; the merge applies it.
	MCPStrict bool
	// AuditLog is the audit log's path: AGENT_AUDIT_LOG, else audit.log in
	// the data directory.
	AuditLog string
	// Permissions is the permission policy for MCP tools (the config
	// files' permissions, --allow/--ask/--deny, --permission-mode). The
	// zero value asks before every MCP tool not declared read-only.
	Permissions Permissions
}

// FromEnv reads the guard configuration through getenv (os.Getenv in the
// program, a map in tests). dataDir is where the audit log goes when
// AGENT_AUDIT_LOG is not set.
//
// A switch accepts 1, true, 0, false (any case) or nothing; any other value
// is an error rather than "off", because a mistyped security switch that
// silently leaves the guard off is worse than a refusal to start. Tool
// lists are comma-separated; a name with white space inside or a list that
// names no tool is an error too.
func FromEnv(getenv func(string) string, dataDir string) (Config, error) {
	var c Config
	var err error
	if c.Allowlist, err = parseList(EnvAllowlist, getenv(EnvAllowlist)); err != nil {
		return Config{}, err
	}
	if c.Confirm, err = parseList(EnvConfirm, getenv(EnvConfirm)); err != nil {
		return Config{}, err
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{EnvPII, &c.PII}, {EnvInput, &c.Input}, {EnvMCPStrict, &c.MCPStrict}} {
		if *b.dst, err = parseSwitch(b.name, getenv(b.name)); err != nil {
			return Config{}, err
		}
	}
	c.AuditLog = AuditPath(getenv, dataDir)
	return c, nil
}

// AuditPath is the audit log's path: AGENT_AUDIT_LOG, else audit.log in
// dataDir, made absolute so the banner and error messages show where it is
// whatever the working directory. It reads no guard switch, so a command
// that only needs the log (knowledge-base ingest, which is always checked)
// does not fail over a mistyped switch it does not use.
func AuditPath(getenv func(string) string, dataDir string) string {
	p := strings.TrimSpace(getenv(EnvAuditLog))
	if p == "" {
		p = filepath.Join(dataDir, DefaultAuditFile)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

func parseSwitch(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false":
		return false, nil
	case "1", "true":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q: want 1 or true to turn the guard on, 0, false or unset to leave it off", name, v)
}

func parseList(name, v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var names []string
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		n := strings.TrimSpace(part)
		if n == "" {
			continue
		}
		if strings.ContainsFunc(n, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
			return nil, fmt.Errorf("%s: tool name %q contains white space; separate tool names with commas", name, n)
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s=%q names no tool; unset it to leave the guard off", name, v)
	}
	return names, nil
}

// Any reports whether at least one guard switch is on. The injection scan
// of MCP tool arguments runs exactly then. The permission policy is not a
// switch: it always applies.
func (c Config) Any() bool {
	return len(c.Allowlist) > 0 || len(c.Confirm) > 0 || c.PII || c.Input || c.MCPStrict
}

// Active describes the permission policy and the guards that are on, one
// short line each, for the chat banner; the policy always has its line.
// Saying what is on lets a user see why a tool call was refused or asked
// about before it happens.
func (c Config) Active() []string {
	a := []string{c.Permissions.Describe()}
	if !c.Any() {
		return a
	}
	if len(c.Allowlist) > 0 {
		a = append(a, "allowlist: only MCP tools "+strings.Join(c.Allowlist, ", ")+" may run")
	}
	if len(c.Confirm) > 0 {
		a = append(a, "confirm: ask before each call to "+strings.Join(c.Confirm, ", "))
	}
	if c.PII {
		a = append(a, "PII: phone numbers, ids and cards masked in MCP output and knowledge-base hits")
	}
	a = append(a, "injection scan of MCP tool arguments")
	if c.Input {
		a = append(a, "injection scan of user messages")
	}
	if c.MCPStrict {
		a = append(a, "strict merge: local tools win name clashes with MCP tools")
	}
	a = append(a, "audit log: "+c.AuditLog)
	return a
}
