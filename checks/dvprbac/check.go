// Package dvprbac checks that fleeting-plugin-dvp's identity may do what the
// plugin does to its pool and the pool's VMs.
package dvprbac

import (
	"context"
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

var Check = &checks.Check{
	ID:       "dvp-rbac",
	Title:    "fleeting-plugin-dvp may read and scale its pool and delete its VMs",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "fleeting-plugin-dvp reads and patches the VirtualMachinePool (spec.replicas) and reads, lists and deletes its " +
			"VirtualMachines, all in group virtualization.deckhouse.io in the pool's namespace: a Role for it " +
			"grants exactly virtualmachinepools get, patch and virtualmachines get, list, delete. Its identity is the " +
			"kubeconfig at plugin_config kubeconfig_path, or the pod's service account when none is given. Without one of " +
			"these verbs the plugin cannot scale up, cannot see its instances, or cannot remove a finished VM.",
		// The apiserver's Forbidden, which the plugin passes on to the runner
		// log (k8s.io/apimachinery pkg/api/errors NewForbidden and the RBAC
		// authorizer's reason); fleeting-plugin-dvp's own source is not
		// available to doctor, so its wording is not quoted.
		Symptom: `virtualmachinepools.virtualization.deckhouse.io "code-runner" is forbidden: User "system:serviceaccount:code-runner-dvp:code-runner" cannot patch resource "virtualmachinepools" in API group "virtualization.deckhouse.io" in the namespace "code-runner-dvp"`,
		Fix:     checks.Text("Bind the plugin's identity to the guide's code-runner Role in the pool's namespace (virtualmachinepools: get, patch; virtualmachines: get, list, delete)."),
		Verify: checks.Steps{
			checks.Say("As the plugin's identity (PLUGIN_IDENTITY), in the pool's namespace, with an admin kubeconfig of the DVP cluster:"),
			checks.Sh(`export POOL_NAMESPACE=code-runner-dvp PLUGIN_IDENTITY=system:serviceaccount:code-runner-dvp:code-runner
d8 k auth can-i patch virtualmachinepools.virtualization.deckhouse.io -n "$POOL_NAMESPACE" --as "$PLUGIN_IDENTITY"`)},
		Patterns: []string{
			// k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, v0.37.2:
			// forbiddenMessage ("User %q cannot %s resource %q in API group %q …") in
			// apierrors.NewForbidden (`%s %q is forbidden: %v`, or `%s is forbidden: %v` for a list).
			`virtualmachinepools.virtualization.deckhouse.io "*" is forbidden: User "*" cannot * resource "virtualmachinepools" in API group "virtualization.deckhouse.io"*`,
			`virtualmachines.virtualization.deckhouse.io* is forbidden: User "*" cannot * resource "virtualmachines" in API group "virtualization.deckhouse.io"*`,
		},
	},
	Requires:  []checks.Node{kubefacts.PluginAPIClientFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Instance, checks.DockerAutoscaler},
	Network:   true,
	Run:       run,
}

// Needed is what the plugin does in the pool's namespace, as the guide's
// Role grants it.
func Needed(ns string) []kubefacts.Access {
	a := func(verb, res, why string) kubefacts.Access {
		return kubefacts.Access{Verb: verb, Group: kubefacts.DVPGroup, Resource: res, Namespace: ns, WhenMissing: why}
	}
	return []kubefacts.Access{
		a("get", "virtualmachinepools", "the plugin cannot read the pool's size"),
		a("patch", "virtualmachinepools", "the plugin cannot change spec.replicas: no VM is ever created"),
		a("get", "virtualmachines", "the plugin cannot read a VM's address to connect to it"),
		a("list", "virtualmachines", "the plugin cannot see the pool's instances"),
		a("delete", "virtualmachines", "the plugin cannot remove a finished VM: the pool never shrinks"),
	}
}

func run(p *checks.Pass) error {
	pa, r := kubefacts.PluginAPIClientFact.Get(p), configfacts.RunnerEntryFact.Get(p)
	pc := pa.Config
	switch {
	case pa.NotDVP != "":
		return checks.Skip("%s", pa.NotDVP)
	case pc.Namespace == "":
		return checks.Skip("plugin_config names no namespace (see dvp-pool)")
	case pa.None != "":
		return checks.Skip("the plugin has no identity (see dvp-pool)")
	case pa.Identity != nil && pa.Identity.Err != nil:
		return checks.Skip("the cluster refuses the plugin's credential (see dvp-pool)")
	}
	want := Needed(pc.Namespace)
	ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
	defer cancel()
	allowed, err := kubefacts.Allowed(p, ctx, pa.API, want)
	if err != nil {
		return fmt.Errorf("access review as the plugin's identity: %w", err)
	}
	user := ""
	if pa.Identity != nil {
		user = pa.Identity.User
	}
	var missing []string
	var ev []checks.Evidence
	for _, a := range want {
		if allowed[a] {
			continue
		}
		missing = append(missing, a.String())
		ev = append(ev, checks.Evidence{Source: "can-i " + a.String() + " -n " + pc.Namespace + " as " + orSource(user, pa),
			Detail: "no: " + a.WhenMissing + " (" + a.Forbidden(user) + ")"})
	}
	if len(missing) == 0 {
		return nil
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s: fleeting-plugin-dvp's identity %s may not %s in namespace %q: the plugin cannot manage pool %s.",
			r.Label(), orSource(user, pa), strings.Join(missing, ", "), pc.Namespace, pc.Pool()),
		Evidence: ev,
		Fix:      checks.Text(fix(pc.Namespace, user, missing)),
	})
	return nil
}

func orSource(user string, pa *kubefacts.PluginAPIClient) string {
	if user != "" {
		return user
	}
	return "(" + pa.Source + ")"
}

// fix is the guide's Role, for the plugin's namespace, bound to the
// identity doctor saw.
func fix(ns, user string, missing []string) string {
	subject := "the plugin's user"
	if sa, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		if sns, name, ok := strings.Cut(sa, ":"); ok {
			subject = fmt.Sprintf("{kind: ServiceAccount, name: %s, namespace: %s}", name, sns)
		}
	} else if user != "" {
		subject = fmt.Sprintf("{kind: User, name: %s}", user)
	}
	return fmt.Sprintf("Grant %s in namespace %s: apply the guide's Role (rules: virtualmachinepools [get, patch] and virtualmachines [get, list, delete], "+
		"apiGroups [virtualization.deckhouse.io]) and a RoleBinding of it to %s.", strings.Join(missing, ", "), ns, subject)
}
