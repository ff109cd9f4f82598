package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/agentapp/agentapp/skills"
	"github.com/agentapp/agentapp/support"
)

// noSkills is the --skills value that publishes none.
const noSkills = "none"

// loadServeSkills reads the skills serve publishes (--skills): the
// built-in playbooks when dir is "", none for noSkills, else the folder
// dir. A skill that breaks the format is left out with a warning naming
// it and why; a folder that cannot be read is an error. from says where
// the skills come from, for the banner.
func loadServeSkills(dir string, logger *slog.Logger) (f *skills.Folder, from string, err error) {
	switch dir {
	case noSkills:
		return nil, "", nil
	case "":
		f, skipped, err := skills.Load(support.Playbooks())
		if err == nil && len(skipped) > 0 {
			err = skipped[0]
		}
		if err != nil {
			// Compiled in and tested: only a broken build gets here.
			return nil, "", fmt.Errorf("the built-in skills do not load: %w", err)
		}
		return f, "built in", nil
	}
	info, err := os.Stat(dir)
	if err == nil && !info.IsDir() {
		err = fmt.Errorf("%s is a file, not a folder", dir)
	}
	if err == nil {
		var skipped []error
		if f, skipped, err = skills.Load(os.DirFS(dir)); err == nil {
			for _, s := range skipped {
				logger.Warn("skipping a skill that breaks the format: "+s.Error(), "dir", dir)
			}
			if len(f.Entries()) == 0 {
				logger.Warn("no skills in "+dir+" (each skill is a folder with a SKILL.md); serving none", "dir", dir)
			}
			return f, dir, nil
		}
	}
	return nil, "", &exitError{code: 2, err: fmt.Errorf("--skills %s: cannot read the skills folder: %w (give a folder holding one folder per skill, or --skills %s)", dir, err, noSkills)}
}

// skills adds the skills published to the banner.
func (b *banner) skills(f *skills.Folder, from string) *banner {
	if f == nil || len(f.Entries()) == 0 {
		b.add("skills", "skills", "none")
		return b
	}
	names := make([]string, 0, len(f.Entries()))
	for _, e := range f.Entries() {
		names = append(names, e.Name())
	}
	b.add("skills", "skills", fmt.Sprintf("%s (%s)", strings.Join(names, ", "), from))
	return b
}
