package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	mcpskills "github.com/agentapp/agentapp/mcpclient/skills"
	"github.com/spf13/cobra"
)

// mcpExitVerify: a skill file did not match its entry; nothing of it was
// printed.
const mcpExitVerify = 5

func newMCPSkillsCmd(f *mcpFlags) *cobra.Command {
	var load, read string
	cmd := &cobra.Command{
		Use:   "skills [--load NAME|URI [--read PATH]] [--server S] [-- COMMAND ARGS…]",
		Short: "List the server's skills (Skills extension); --load prints one's verified SKILL.md",
		Long: `skills lists the skills the server publishes (the Skills extension,
io.modelcontextprotocol/skills) as JSON: name, description and URI of each.
Two skills of the same name are listed under the paths that tell them apart.
An entry the extension makes unloadable is left out, with a warning on stderr
saying why. Listing reads no skill file.

--load NAME (or a skill's URI, also one the listing left out) reads the
skill's SKILL.md and prints it once its size, digest and front matter match
the entry; --read PATH then prints one of its files, by its path inside the
skill (e.g. references/GUIDE.md), if the entry lists it and it matches.

Exit codes as for the other mcp subcommands, and 5 when a file failed
verification (stderr says what did not match; nothing of it was printed).
A server without the extension lists no skills and says so on stderr; --load
then exits 4.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if read != "" && load == "" {
				return mcpUsageError(cmd, "--read needs --load: a skill's files are read under the entry it was loaded from")
			}
			return withBridge(cmd, f, args, 0, func(ctx context.Context, b *mcpclient.Bridge, _ []string) error {
				return mcpSkills(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), b, load, read)
			})
		},
	}
	cmd.Flags().StringVar(&load, "load", "", "load this skill (a listed name or a SKILL.md URI) and print its verified SKILL.md")
	cmd.Flags().StringVar(&read, "read", "", "with --load: print this file of the skill (a path inside it), verified")
	return cmd
}

func mcpSkills(ctx context.Context, out, errw io.Writer, b *mcpclient.Bridge, load, read string) error {
	c := mcpskills.New(b, nil)
	if !c.Declared() {
		msg := fmt.Sprintf("MCP server %s does not declare the Skills extension (io.modelcontextprotocol/skills): it publishes no skills", b.Name())
		if load != "" {
			return &exitError{mcpExitNotFound, errors.New(msg)}
		}
		fmt.Fprintln(errw, msg)
		return mcpWriteJSON(out, map[string]any{"server": b.Name(), "skills": []any{}})
	}
	if load == "" {
		l, err := c.List(ctx)
		if err != nil {
			return requestError(err)
		}
		for _, w := range l.Warnings {
			fmt.Fprintln(errw, "warning: "+textsafe.Preview(w, 1000))
		}
		type row struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			URI         string `json:"uri"`
			Files       int    `json:"files,omitempty"`
			Dynamic     bool   `json:"dynamic,omitempty"`
		}
		rows := []row{}
		for _, s := range l.Skills {
			r := row{Name: s.Name, Description: s.Description(), URI: s.Entry.URI, Dynamic: s.Entry.Resources.Dynamic}
			if !r.Dynamic {
				r.Files = len(s.Entry.Resources.Files)
			}
			rows = append(rows, r)
		}
		return mcpWriteJSON(out, map[string]any{"server": b.Name(), "skills": rows})
	}
	s, err := c.Find(ctx, load)
	if errors.Is(err, mcpskills.ErrNoSkill) {
		return &exitError{mcpExitNotFound, &safeError{err}}
	}
	if err != nil {
		return requestError(err)
	}
	ld, err := c.Load(ctx, s)
	if err != nil {
		return skillError(err)
	}
	if read == "" {
		_, err = out.Write(ld.File)
		return err
	}
	data, err := c.ReadFile(ctx, s, read)
	if err != nil {
		return skillError(err)
	}
	_, err = out.Write(data)
	return err
}

// skillError is the exit of a failed load or read: verification (5), or
// as any request.
func skillError(err error) error {
	var ve *mcpskills.VerifyError
	if errors.As(err, &ve) {
		return &exitError{mcpExitVerify, &safeError{err}}
	}
	return requestError(err)
}
