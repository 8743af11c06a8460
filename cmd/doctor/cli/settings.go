package cli

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/checks/all"
)

// Every address doctor contacts is a setting, declared by the node that
// reads it (checks.Setting), or comes from the runner's own files, so tests
// point them at loopback.

// registerSettings adds a flag for each setting of the catalog (all.Settings),
// of the setting's name and with its usage; the returned func reads them
// after parsing. Only flags given (or the setting's environment variable)
// are set, so a node can tell "given" from "default".
func registerSettings(fs *pflag.FlagSet) func() map[string]string {
	settings := all.Settings()
	given := make([]*string, len(settings))
	for i, s := range settings {
		given[i] = fs.String(s.Name, "", s.Usage)
	}
	return func() map[string]string {
		m := map[string]string{}
		for i, s := range settings {
			v := *given[i]
			if v == "" && s.Env != "" {
				v = os.Getenv(s.Env)
			}
			if v != "" {
				m[s.Name] = v
			}
		}
		return m
	}
}

// settingNames are the flags registerSettings adds, for completion.
func settingNames() []string {
	var names []string
	for _, s := range all.Settings() {
		names = append(names, s.Name)
	}
	return names
}
