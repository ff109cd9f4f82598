package store

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

func userDataDir(getenv func(string) string) (string, error) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		// os.UserConfigDir is %AppData% and ~/Library/Application Support
		// there, which is where data goes too on those systems.
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("cannot find the user data directory: %w (set AGENTAPP_DATA_DIR)", err)
		}
		return filepath.Join(d, "agentapp"), nil
	}
	if x := getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "agentapp"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the home directory: %w (set AGENTAPP_DATA_DIR)", err)
	}
	return filepath.Join(home, ".local", "share", "agentapp"), nil
}
