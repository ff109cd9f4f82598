package support

import (
	"embed"
	"io/fs"
)

// playbooks are the customer-service skills shipped in the binary
// (support/skills: refunds, handoff, order-status), in the Agent Skills
// format: each a folder with a SKILL.md and references beside it.
//
//go:embed skills
var playbooks embed.FS

// Playbooks is the folder of the shipped skills, one directory per
// skill, for `agentapp serve` to publish (skills.Load reads it).
func Playbooks() fs.FS {
	sub, err := fs.Sub(playbooks, "skills")
	if err != nil {
		panic(err) // "skills" is a valid path, embedded above
	}
	return sub
}
