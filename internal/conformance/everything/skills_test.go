package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/skills"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type uriParams struct {
	mcp.ParamsBase
	URI string `json:"uri,omitempty"`
}

type skillsPage struct {
	mcp.ResultBase
	Skills []skills.Entry `json:"skills"`
}

type dirPage struct {
	mcp.ResultBase
	Resources []*mcp.Resource `json:"resources"`
}

// TestFixtureSkills: the fixture publishes skills at both protocol
// generations, and the first listed skill's root has a subdirectory, which
// the suite's sep-2640-skills-directory scenario looks for there.
func TestFixtureSkills(t *testing.T) {
	_, url := startFixture(t)
	ctx := context.Background()
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			if err := mcp.AddSendingCustomMethod[*uriParams, *skillsPage](client, skills.MethodList); err != nil {
				t.Fatal(err)
			}
			if err := mcp.AddSendingCustomMethod[*uriParams, *dirPage](client, skills.MethodDirectoryRead); err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			caps := cs.InitializeResult().Capabilities
			if ext, _ := caps.Extensions[skills.ExtensionID].(map[string]any); ext["directoryRead"] != true || caps.Resources == nil {
				t.Fatalf("capabilities %+v: want the skills extension with directoryRead, and resources", caps)
			}
			list, err := mcp.CallCustomMethod[*uriParams, *skillsPage](ctx, cs, skills.MethodList, &uriParams{})
			if err != nil || len(list.Skills) == 0 {
				t.Fatalf("skills/list: %v %+v", err, list)
			}
			dir, err := mcp.CallCustomMethod[*uriParams, *dirPage](ctx, cs, skills.MethodDirectoryRead, &uriParams{URI: list.Skills[0].Dir()})
			if err != nil {
				t.Fatal(err)
			}
			var subdirs []string
			for _, r := range dir.Resources {
				if r.MIMEType == skills.DirectoryMIMEType {
					subdirs = append(subdirs, r.URI)
				}
			}
			if len(subdirs) == 0 || !strings.HasPrefix(subdirs[0], list.Skills[0].Dir()+"/") {
				t.Errorf("%s has no subdirectory: %+v", list.Skills[0].Dir(), dir.Resources)
			}
		})
	}
}
