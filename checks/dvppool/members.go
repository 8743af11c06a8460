package dvppool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// checkCloudInit compares the pool's cloud-init with connector_config: the
// user it creates, and the key it authorizes for that user.
func checkCloudInit(p *checks.Pass, pool *unstructured.Unstructured, pc configfacts.PluginConfig, r *configfacts.RunnerEntry) []string {
	cc := r.Runner.Autoscaler.ConnectorConfig
	user := cc.Username
	if user == "" {
		return nil // fleeting-connector says username is unset
	}
	src := "GET " + poolPath(pc)
	prov, ok, _ := unstructured.NestedMap(pool.Object, "spec", "virtualMachineTemplate", "spec", "provisioning")
	if !ok {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: VirtualMachinePool %s has no provisioning in its VM template: no cloud-init creates the user %q the runner connects as, and every SSH connection fails.",
				r.Label(), pc.Pool(), user),
			Evidence: []checks.Evidence{{Source: src, Detail: "spec.virtualMachineTemplate.spec.provisioning is absent"}},
			Fix:      cloudInitFix(pc, user, cc.KeyPathname, runnerCwd(p)),
		})
		return nil
	}
	typ, _, _ := unstructured.NestedString(prov, "type")
	if typ != "UserData" {
		ref, _, _ := unstructured.NestedString(prov, "userDataRef", "name")
		return []string{fmt.Sprintf("the cloud-init user (provisioning type %s%s is not read)", orUnset(typ), map[bool]string{true: ", Secret " + ref}[ref != ""])}
	}
	data, _, _ := unstructured.NestedString(prov, "userData")
	users, err := cloudUsers(data)
	if err != nil {
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s: the cloud-init of VirtualMachinePool %s does not create the user %q: %v.", r.Label(), pc.Pool(), user, err),
			Evidence: []checks.Evidence{{Source: src, Detail: "spec.virtualMachineTemplate.spec.provisioning.userData"}},
			Fix:      cloudInitFix(pc, user, cc.KeyPathname, runnerCwd(p)),
		})
		return nil
	}
	var names []string
	var found *cloudUser
	for i := range users {
		names = append(names, users[i].Name)
		if users[i].Name == user {
			found = &users[i]
		}
	}
	if found == nil {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the cloud-init of VirtualMachinePool %s creates no user %q (connector_config.username): every SSH connection to its VMs fails.",
				r.Label(), pc.Pool(), user),
			Evidence: []checks.Evidence{{Source: src, Detail: fmt.Sprintf("userData users: %v", names)}},
			Fix:      cloudInitFix(pc, user, cc.KeyPathname, runnerCwd(p)),
		})
		return nil
	}
	if cc.KeyPathname == "" {
		return nil // fleeting-connector says key_path is unset
	}
	hp := configfacts.RunnerPath(p.Env, hostfacts.RunnerFact.Get(p).Selected, cc.KeyPathname)
	b, err := configfacts.RunnerEntryFact.Get(p).File.Files.Read(hp, hostio.KindPEM)
	if err != nil {
		why := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			why = "it does not exist (see fleeting-connector)"
		}
		return []string{"the cloud-init key against key_path " + cc.KeyPathname + ": " + why}
	}
	pub, err := publicHalf(b)
	if err != nil {
		return []string{"the cloud-init key: key_path " + cc.KeyPathname + " holds no private key ssh reads (see fleeting-connector)"}
	}
	ok, bad := authorizes(found.Keys, pub)
	if ok {
		return nil
	}
	detail := fmt.Sprintf("ssh_authorized_keys of %s: %d entries, none is %s (the public half of %s)", user, len(found.Keys), describeKey(pub), cc.KeyPathname)
	if bad > 0 {
		detail += fmt.Sprintf("; %d entries are not keys (a placeholder such as <PUBLIC_KEY> left in place)", bad)
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s: the cloud-init of VirtualMachinePool %s does not authorize key_path's key for %q: the runner's SSH connection to every VM is refused.",
			r.Label(), pc.Pool(), user),
		Evidence: []checks.Evidence{{Source: src, Detail: detail}},
		Fix:      cloudInitFix(pc, user, cc.KeyPathname, runnerCwd(p)),
	})
	return nil
}

func cloudInitFix(pc configfacts.PluginConfig, user, keyPath, cwd string) checks.Steps {
	return checks.Steps{
		checks.Say(fmt.Sprintf("In the pool's spec.virtualMachineTemplate.spec.provisioning (type: UserData), create the user in #cloud-config: "+
			"a users entry named %s, shell /bin/bash, whose ssh_authorized_keys holds the public half of key_path, which this prints:", user)),
		publicHalfStep(keyPath, cwd),
		checks.Say("Apply the pool's manifest again; VMs made before the change keep the old cloud-init, so delete them:"),
		newD8k(pc).reapply(),
	}
}

// Pool members carry the pool's uid in this label and the pool as their
// controller (deckhouse/virtualization poollabels.PoolUID and ListMembers).
const poolUIDLabel = "vmpool.virtualization.deckhouse.io/pool-uid"

// defaultAcquireTimeout is how long a job waits for an instance when
// instance_acquire_timeout is unset (executors/internal/autoscaler/
// executor.go, gitlab-runner v19.3.0: "It defaults to 15 minutes").
const defaultAcquireTimeout = 15 * time.Minute

// checkVMs finds the pool's VMs that stay not Running longer than a job
// waits for an instance.
func checkVMs(p *checks.Pass, ctx context.Context, dyn dynamic.Interface, pool *unstructured.Unstructured, pa *kubefacts.PluginAPIClient, r *configfacts.RunnerEntry) []string {
	pc := pa.Config
	list, err := dyn.Resource(vmsGVR).Namespace(pc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: poolUIDLabel + "=" + string(pool.GetUID()), Limit: 500})
	switch {
	case apierrors.IsForbidden(err):
		return []string{"the pool's VMs (" + identity(pa) + " may not list virtualmachines; see dvp-rbac)"}
	case err != nil:
		return []string{"the pool's VMs: " + err.Error()}
	}
	budget, budgetFrom := defaultAcquireTimeout, "the default instance_acquire_timeout"
	if t := r.Runner.Autoscaler.InstanceAcquireTimeout; t > 0 {
		budget, budgetFrom = t, "instance_acquire_timeout"
	}
	now := p.Env.Now()
	var ev []checks.Evidence
	var stuck []string
	for i := range list.Items {
		vm := &list.Items[i]
		if ref := metav1.GetControllerOf(vm); ref == nil || ref.UID != pool.GetUID() || vm.GetDeletionTimestamp() != nil {
			continue
		}
		phase, _, _ := unstructured.NestedString(vm.Object, "status", "phase")
		if phase == "Running" {
			continue
		}
		since := phaseSince(vm)
		if now.Sub(since) <= budget {
			continue
		}
		stuck = append(stuck, vm.GetName())
		ev = append(ev, checks.Evidence{
			Source: fmt.Sprintf("GET /apis/%s/%s/namespaces/%s/virtualmachines/%s", group, version, pc.Namespace, vm.GetName()),
			Detail: fmt.Sprintf("status.phase=%s since %s (%s)%s", orUnset(phase), since.UTC().Format(time.RFC3339), now.Sub(since).Round(time.Second), falseConditions(vm)),
		})
	}
	if len(stuck) == 0 {
		return nil
	}
	sort.Strings(stuck)
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s: %s of pool %s %s not been Running for longer than %s (%s): the instance never becomes ready, and the jobs waiting on it fail with `unable to acquire instance`.",
			r.Label(), checks.Count(len(stuck), "VM", "VMs"), pc.Pool(), hasHave(len(stuck)), budget, budgetFrom),
		Evidence: ev,
		Fix: checks.Steps{
			checks.Say("Read why in the VM's conditions and events (the disk image, storage class, VirtualMachineClass or node resources):"),
			newD8k(pc).vmCmd("describe", stuck[0]),
			checks.Say("Fix the pool's template, then delete the stuck VMs so the plugin makes new ones."),
		},
	})
	return nil
}

// phaseSince is when the VM entered its phase: the last of
// status.stats.phasesTransitions, else its creation.
func phaseSince(vm *unstructured.Unstructured) time.Time {
	since := vm.GetCreationTimestamp().Time
	tr, _, _ := unstructured.NestedSlice(vm.Object, "status", "stats", "phasesTransitions")
	if len(tr) > 0 {
		last, _ := tr[len(tr)-1].(map[string]any)
		if ts, _, _ := unstructured.NestedString(last, "timestamp"); ts != "" {
			if t, err := time.Parse(time.RFC3339, ts); err == nil {
				since = t
			}
		}
	}
	return since
}

// falseConditions names the VM's conditions that are not True, which say
// what it waits for.
func falseConditions(vm *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(vm.Object, "status", "conditions")
	var out []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] == "True" {
			continue
		}
		s := fmt.Sprintf("%v=%v", m["type"], m["status"])
		if reason, _ := m["reason"].(string); reason != "" {
			s += " " + keep.Reason(reason)
		}
		if msg, _ := m["message"].(string); msg != "" {
			msg = keep.Message(msg)
			if len(msg) > 160 {
				msg = msg[:160] + "…"
			}
			s += ": " + msg
		}
		out = append(out, s)
		if len(out) == 3 {
			break
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, "; ")
}

// hasHave is the verb for n VMs.
func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}
