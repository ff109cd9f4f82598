package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/spf13/pflag"
)

// permFlags are the permission flags of chat and web: --allow, --ask and
// --deny take patterns (repeatable, comma-separated), --permission-mode
// the default for what no rule names.
type permFlags struct {
	allow, ask, deny []string
	mode             string
}

// Flag names, used in hints.
const (
	allowFlag          = "--allow"
	permissionModeFlag = "--permission-mode"
)

func (p *permFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&p.allow, "allow", nil, "run these MCP tools without asking: PATTERN[,PATTERN…] where a pattern is SERVER:TOOL, SERVER:*, TOOL or * (repeatable)")
	fl.StringArrayVar(&p.ask, "ask", nil, "ask before these MCP tools even when their server declares them read-only (patterns as --allow)")
	fl.StringArrayVar(&p.deny, "deny", nil, "refuse these MCP tools; a deny beats every allow and the permission mode (patterns as --allow)")
	fl.StringVar(&p.mode, "permission-mode", string(guard.ModeDefault), "what happens to an MCP tool no rule names: "+string(guard.ModeDefault)+" (ask unless its server declares it read-only) or "+string(guard.ModeAllowAll)+" (run it without asking, for scripts; --deny still holds)")
}

// apply adds the flags' rules and mode to cfg. A bad pattern or mode is a
// usage error naming the flag.
func (p *permFlags) apply(cfg *guard.Config) error {
	mode, err := guard.ParseMode(p.mode)
	if err != nil {
		return usageError("%s: %v", permissionModeFlag, err)
	}
	cfg.Permissions.Mode = mode
	for _, set := range []struct {
		flag string
		perm guard.Permission
		vals []string
	}{{"--deny", guard.Deny, p.deny}, {"--ask", guard.Ask, p.ask}, {allowFlag, guard.Allow, p.allow}} {
		for _, v := range set.vals {
			for _, s := range strings.Split(v, ",") {
				if strings.TrimSpace(s) == "" {
					continue
				}
				pat, err := guard.ParsePattern(s)
				if err != nil {
					return usageError("%s: %v", set.flag, err)
				}
				cfg.Permissions.Rules = append(cfg.Permissions.Rules, guard.Rule{Pattern: pat, Permission: set.perm, Source: set.flag})
			}
		}
	}
	return nil
}

// askHint says how to let a call run that needed a question nobody could
// answer (-p without a terminal).
func askHint(req guard.ConfirmRequest) string {
	switch {
	case req.Server == "":
		return fmt.Sprintf("take %s out of %s to run it without asking", req.Tool, guard.EnvConfirm)
	case req.Cause == guard.AskConfirmList:
		return fmt.Sprintf("take %s out of %s, or run with %s %s", req.Tool, guard.EnvConfirm, permissionModeFlag, guard.ModeAllowAll)
	case req.Cause == guard.AskRule:
		return fmt.Sprintf("drop the ask rule, or run with %s %s", permissionModeFlag, guard.ModeAllowAll)
	}
	return fmt.Sprintf("allow it with %s %s:%s, or run with %s %s", allowFlag, req.Server, req.Tool, permissionModeFlag, guard.ModeAllowAll)
}

// allowInProject is the approval question's "always for this project": it
// adds server:tool to the allow list of the local scope's file (yours, for
// this project, never shared), which the chat reads at every start, and
// returns that file.
func allowInProject(server, tool string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	path, err := mcpconfig.LocalFile(wd, os.Getenv)
	if err != nil {
		return "", err
	}
	file, err := mcpconfig.OpenFile(path)
	if err != nil {
		return "", err
	}
	if !file.Exists() {
		setLocalProject(file)
	}
	if err := file.AddAllow(server + ":" + tool); err != nil {
		return "", err
	}
	return path, file.Save()
}
