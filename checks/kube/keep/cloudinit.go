package keep

import (
	"strings"

	"sigs.k8s.io/yaml"
)

// CloudConfigUsers is what dvp-pool reads of a pool's cloud-init userData
// (dvppool.cloudUsers): the #cloud-config header and, of each user entry,
// its name and ssh_authorized_keys, which are public keys. The rest of a
// cloud-config (passwords, chpasswd, write_files, runcmd: often a
// registration token) is never kept. A userData that is not cloud-config
// stays not cloud-config, and one that is not YAML stays not YAML (with a
// fixed error of its own: the original's could quote it).
func CloudConfigUsers(userData string) string {
	if !strings.HasPrefix(strings.TrimSpace(userData), "#cloud-config") {
		return "(not kept: not #cloud-config)"
	}
	var doc struct {
		Users []any `json:"users"`
	}
	if err := yaml.Unmarshal([]byte(userData), &doc); err != nil {
		return "#cloud-config\n" + notYAML
	}
	type user struct {
		Name string   `json:"name"`
		Keys []string `json:"ssh_authorized_keys,omitempty"`
	}
	var users []user
	for _, u := range doc.Users {
		m, ok := u.(map[string]any)
		if !ok {
			continue // "default": the distribution's user, never the connector's
		}
		name, _ := m["name"].(string)
		kept := user{Name: name}
		keys, _ := m["ssh_authorized_keys"].([]any)
		for _, k := range keys {
			if s, ok := k.(string); ok {
				kept.Keys = append(kept.Keys, s)
			}
		}
		users = append(users, kept)
	}
	out, err := yaml.Marshal(map[string]any{"users": users})
	if err != nil {
		return "#cloud-config\n" + notYAML
	}
	return "#cloud-config\n" + string(out)
}

// notYAML is a line no YAML parser reads: a tab where indentation is.
const notYAML = "users:\n\t- (not kept: the userData is not YAML)\n"
