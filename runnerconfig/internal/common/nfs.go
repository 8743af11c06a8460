package common

import (
	"fmt"
	"strings"
)

// UnmarshalTOML implements toml.Unmarshaler for one
// [[runners.kubernetes.volumes.nfs]] element, with gitlab-runner's behaviour:
//
//   - the value must be a table, else "nfs volume: expected a table, got T";
//   - name, mount_path, sub_path, server and path are taken only when they are
//     strings, read_only only when it is a boolean; a value of another type is
//     silently ignored (it is not a type error);
//   - name, mount_path, server and path are then required, else
//     "nfs volume: missing required fields: name, server" (in that order);
//   - because the type decodes itself, BurntSushi/toml marks every key under
//     the table as decoded: an unknown key inside an nfs volume never shows up
//     in MetaData.Undecoded.
func (n *KubernetesNFS) UnmarshalTOML(data any) error {
	m, ok := data.(map[string]any)
	if !ok {
		return fmt.Errorf("nfs volume: expected a table, got %T", data)
	}

	str := func(key string, dst *string) {
		if s, ok := m[key].(string); ok {
			*dst = s
		}
	}
	str("name", &n.Name)
	str("mount_path", &n.MountPath)
	str("sub_path", &n.SubPath)
	str("server", &n.Server)
	str("path", &n.Path)
	if b, ok := m["read_only"].(bool); ok {
		n.ReadOnly = b
	}

	var missing []string
	for _, req := range []struct {
		key string
		val string
	}{{"name", n.Name}, {"mount_path", n.MountPath}, {"server", n.Server}, {"path", n.Path}} {
		if req.val == "" {
			missing = append(missing, req.key)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("nfs volume: missing required fields: %s", strings.Join(missing, ", "))
	}
	return nil
}
