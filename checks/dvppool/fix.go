package dvppool

import (
	"errors"
	"fmt"
	"path"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

// poolLabel is the label the pool controller puts on its VMs with the
// pool's name (the guide lists a pool's VMs with it).
const poolLabel = "vmpool.virtualization.deckhouse.io/pool"

// explicitPatch is the merge patch that sets the pool's scaleDownPolicy.
const explicitPatch = `{"spec":{"scaleDownPolicy":"Explicit"}}`

// defaultKey is the guide's key_path, for a fix when key_path is unset.
const defaultKey = "/etc/gitlab-runner/ssh/id_ed25519"

// d8k builds the commands of the pool's fixes: `d8 k` aimed at the
// cluster and identity the plugin uses, with the plugin's kubeconfig
// (plugin_config kubeconfig_path); without one the plugin uses its pod's
// service account, which d8 k in that pod uses too. Every name a command
// carries is checked first (a namespace as the apiserver checks one, the
// pool's and a VM's as object names), and a command that cannot be
// printed is a sentence that says why (checks.Withheld).
type d8k struct {
	pc  configfacts.PluginConfig
	err error // why no command names the plugin's cluster
}

func newD8k(pc configfacts.PluginConfig) d8k {
	k := d8k{pc: pc}
	if kp := pc.KubeconfigPath; kp != "" && !path.IsAbs(kp) {
		// The plugin opens it, not this shell: a relative path would load
		// whatever file the operator's directory holds under that name.
		k.err = errors.New("plugin_config kubeconfig_path is a relative path, and a command run in the operator's directory would load another file")
	}
	return k
}

// base is `d8 k [--kubeconfig FILE]`.
func (k d8k) base() (fixcode.Cmd, error) {
	if k.err != nil {
		return fixcode.Cmd{}, k.err
	}
	cmd := fixcode.Command("d8", "k")
	if k.pc.KubeconfigPath != "" {
		cmd = cmd.Arg("--kubeconfig", k.pc.KubeconfigPath)
	}
	return cmd, nil
}

// inNamespace is `d8 k [--kubeconfig FILE] -n NAMESPACE`, the pool's
// namespace checked.
func (k d8k) inNamespace() (fixcode.Cmd, error) {
	cmd, err := k.base()
	if err != nil {
		return cmd, err
	}
	if err := fixcode.NamespaceName(k.pc.Namespace); err != nil {
		return cmd, fmt.Errorf("the pool's namespace is %w", err)
	}
	return cmd.Arg("-n", k.pc.Namespace), nil
}

// poolCmd is `d8 k ... -n NAMESPACE VERB virtualmachinepool POOL ARGS...`.
func (k d8k) poolCmd(verb string, args ...string) checks.Step {
	cmd, err := k.inNamespace()
	if err == nil {
		err = k.poolName()
	}
	return step(err, cmd.Arg(verb, "virtualmachinepool", k.pc.Name).Arg(args...))
}

// vmCmd is `d8 k ... -n NAMESPACE VERB vm NAME`, a VM of the pool.
func (k d8k) vmCmd(verb, vm string) checks.Step {
	cmd, err := k.inNamespace()
	if err == nil {
		if err = fixcode.ObjectName(vm); err != nil {
			err = fmt.Errorf("the VM's name is %w", err)
		}
	}
	return step(err, cmd.Arg(verb, "vm", vm))
}

// apply is `d8 k apply -f code-runner-pool.yaml`, the guide's file.
func (k d8k) apply() checks.Step {
	cmd, err := k.base()
	return step(err, cmd.Arg("apply", "-f", "code-runner-pool.yaml"))
}

// reapply applies the guide's file again and deletes the pool's VMs (by
// the label the controller gives them, the pool's name: one word), so that
// the plugin makes new ones from the new template.
func (k d8k) reapply() checks.Step {
	apply, err := k.base()
	del, nerr := k.inNamespace()
	if err == nil {
		err = nerr
	}
	if err == nil {
		err = k.poolName()
	}
	return step(err, apply.Arg("apply", "-f", "code-runner-pool.yaml"), del.Arg("delete", "vm", "-l", poolLabel+"="+k.pc.Name))
}

// poolName is nil when the pool's name is an object name.
func (k d8k) poolName() error {
	if err := fixcode.ObjectName(k.pc.Name); err != nil {
		return fmt.Errorf("the pool's name is %w", err)
	}
	return nil
}

// step is the block of cmds, or why it is withheld.
func step(err error, cmds ...fixcode.Cmd) checks.Step {
	if err != nil {
		return checks.Withheld(err)
	}
	return checks.Commands(cmds...)
}

// publicHalfStep prints the public half of the key at file, as root (the
// key is the runner's, mode 0400 or 0600). ssh-keygen only reads it: a
// path outside the runner's directories changes nothing, so no FixScope.
// file is the runner's key_path; a relative one is the runner's working
// directory's (cwd; "" when unknown), as the runner reads it (os.ReadFile,
// see fleeting-connector).
func publicHalfStep(file, cwd string) checks.Step {
	if file == "" {
		file = defaultKey
	}
	if !path.IsAbs(file) {
		if !path.IsAbs(cwd) {
			return checks.Withheld(errors.New("connector_config key_path is a relative path, and the runner's working directory is unknown"))
		}
		file = path.Join(cwd, file)
	}
	return checks.Commands(fixcode.Command("ssh-keygen", "-y", "-f", file).Sudo())
}
