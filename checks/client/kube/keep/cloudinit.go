package keep

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// CloudUser is one entry of a #cloud-config users list, as far as the
// fleeting connector cares: its name and the keys cloud-init authorizes
// for it (public keys).
type CloudUser struct {
	Name string   `json:"name"`
	Keys []string `json:"ssh_authorized_keys,omitempty"` // as written
}

// errNotCloudConfig is userData cloud-init does not read as cloud-config.
var errNotCloudConfig = errors.New("userData does not start with #cloud-config: cloud-init does not read it as cloud-config")

// CloudUsers reads the users of a #cloud-config document (dvp-pool). An
// entry may be a mapping or the string "default" (cloud-init's
// distribution user, which is not named here and so is never the
// connector's username).
func CloudUsers(userData string) ([]CloudUser, error) {
	if !strings.HasPrefix(strings.TrimSpace(userData), "#cloud-config") {
		return nil, errNotCloudConfig
	}
	var doc struct {
		Users []any `json:"users"`
	}
	if err := yaml.Unmarshal([]byte(userData), &doc); err != nil {
		return nil, fmt.Errorf("userData is not YAML: %v", err)
	}
	var out []CloudUser
	for _, u := range doc.Users {
		m, ok := u.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		cu := CloudUser{Name: name}
		keys, _ := m["ssh_authorized_keys"].([]any)
		for _, k := range keys {
			if s, ok := k.(string); ok {
				cu.Keys = append(cu.Keys, s)
			}
		}
		out = append(out, cu)
	}
	return out, nil
}

// CloudConfigUsers is what the cut keeps of a pool's cloud-init userData:
// the #cloud-config header and the users CloudUsers reads, re-encoded.
// The rest of a cloud-config (passwords, chpasswd, write_files, runcmd:
// often a registration token) is never kept. A userData that is not
// cloud-config stays not cloud-config, and one that is not YAML stays not
// YAML (with a fixed error of its own: the original's could quote it).
func CloudConfigUsers(userData string) string {
	users, err := CloudUsers(userData)
	switch {
	case errors.Is(err, errNotCloudConfig):
		return "(not kept: not #cloud-config)"
	case err != nil:
		return "#cloud-config\n" + notYAML
	}
	out, err := yaml.Marshal(map[string]any{"users": users})
	if err != nil {
		return "#cloud-config\n" + notYAML
	}
	return "#cloud-config\n" + string(out)
}

// notYAML is a line no YAML parser reads: a tab where indentation is.
const notYAML = "users:\n\t- (not kept: the userData is not YAML)\n"
