package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/spf13/cobra"
)

// claudeDesktopConfig returns where Claude Desktop keeps its config on
// goos: ~/Library/Application Support/Claude on macOS, %APPDATA%\Claude on
// Windows, $XDG_CONFIG_HOME/Claude (~/.config/Claude) elsewhere.
func claudeDesktopConfig(goos string, getenv func(string) string) (string, error) {
	const name = "claude_desktop_config.json"
	home := getenv("HOME")
	switch goos {
	case "darwin":
		if home == "" {
			return "", errors.New("HOME is not set")
		}
		return filepath.Join(home, "Library", "Application Support", "Claude", name), nil
	case "windows":
		if app := getenv("APPDATA"); app != "" {
			return filepath.Join(app, "Claude", name), nil
		}
		if up := getenv("USERPROFILE"); up != "" {
			return filepath.Join(up, "AppData", "Roaming", "Claude", name), nil
		}
		return "", errors.New("neither APPDATA nor USERPROFILE is set")
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "Claude", name), nil
	}
	if home == "" {
		return "", errors.New("neither XDG_CONFIG_HOME nor HOME is set")
	}
	return filepath.Join(home, ".config", "Claude", name), nil
}

// mcpAddFromDesktop is `mcp add-from-claude-desktop [NAME…]`: it copies the
// named servers (or all) of Claude Desktop's file into the target scope,
// entries as written, skipping a name the target already has.
func mcpAddFromDesktop(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, names []string) error {
	src := mf.file
	if src == "" {
		p, err := claudeDesktopConfig(runtime.GOOS, os.Getenv)
		if err != nil {
			return &exitError{code: 1, err: fmt.Errorf("cannot find Claude Desktop's config: %v; name it with --file", err)}
		}
		src = p
	}
	from, err := mcpconfig.OpenFile(src)
	if err != nil {
		return err
	}
	if !from.Exists() {
		return &exitError{code: 1, err: fmt.Errorf("%s does not exist (is Claude Desktop installed for this user?); name the file with --file", src)}
	}
	have := from.Names()
	if len(have) == 0 {
		return &exitError{code: 1, err: fmt.Errorf("%s has no servers in mcpServers; nothing to import", src)}
	}
	if len(names) == 0 {
		names = have
	}
	path, scope, err := targetFile(cmd, f, mf, defaultScope)
	if err != nil {
		return err
	}
	to, err := mcpconfig.OpenFile(path)
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	var added, skipped []string
	for _, n := range names {
		e, ok := from.Entry(n)
		if !ok {
			return &exitError{code: 1, err: fmt.Errorf("%s has no server named %q (it has: %s)", src, n, strings.Join(have, ", "))}
		}
		if _, dup := to.Entry(n); dup {
			skipped = append(skipped, n)
			continue
		}
		if err := mcpconfig.CheckEntry(n, e); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), textsafe.Escape(fmt.Sprintf("agentapp: warning: imported %s as written, but it will not start until fixed: %v", n, err)))
		}
		if scope == mcpconfig.ScopeProject {
			warnSharedSecrets(cmd.ErrOrStderr(), path, e)
		}
		to.Set(n, e)
		added = append(added, n)
	}
	if len(added) > 0 {
		if scope == mcpconfig.ScopeLocal {
			setLocalProject(to)
		}
		if err := to.Save(); err != nil {
			return err
		}
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("Imported %s from %s into %s (%s scope).", strings.Join(added, ", "), src, path, scope)))
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("Skipped %s: %s already has %s (agentapp mcp remove NAME first to replace).", strings.Join(skipped, ", "), path, plural(len(skipped), "that name", "those names"))))
	}
	return nil
}
