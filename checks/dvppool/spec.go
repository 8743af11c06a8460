package dvppool

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
)

// The VirtualMachinePool fields read here, as deckhouse/virtualization's
// api/core/v1alpha2/virtual_machine_pool.go declares them (json names):
// spec.replicas (*int32), spec.scaleDownPolicy (NewestFirst, OldestFirst,
// Explicit), spec.virtualMachineTemplate.spec (an ordinary
// VirtualMachineSpec, with provisioning {type, userData}),
// spec.virtualDiskTemplates[] {name, spec: a VirtualDiskSpec with
// persistentVolumeClaim.size and dataSource.objectRef {kind, name}}.
const scaleDownExplicit = "Explicit"

// diskImage is the image a disk template is filled from.
type diskImage struct {
	Disk, Kind, Name string
}

// specFindings judges the pool's spec against what the plugin needs; the
// cloud-init and the image are judged apart, they need more reads.
func specFindings(pool *unstructured.Unstructured, pc configfacts.PluginConfig, label string) []checks.Finding {
	src := "GET " + poolPath(pc)
	var out []checks.Finding
	policy, _, _ := unstructured.NestedString(pool.Object, "spec", "scaleDownPolicy")
	if policy != scaleDownExplicit {
		out = append(out, checks.Finding{
			Cause: fmt.Sprintf("%s: VirtualMachinePool %s has scaleDownPolicy %s, not Explicit: the plugin removes a finished VM by deleting it "+
				"and lowering spec.replicas, and a pool that picks replicas itself on a scale-down can stop a VM a job is running on.",
				label, pc.Pool(), orUnset(policy)),
			Evidence: []checks.Evidence{{Source: src, Detail: "spec.scaleDownPolicy=" + orUnset(policy)}},
			Fix:      checks.Steps{newD8k(pc).poolCmd("patch", "--type", "merge", "-p", explicitPatch)},
		})
	}
	replicas, set, _ := unstructured.NestedInt64(pool.Object, "spec", "replicas")
	if set && pc.MaxInstances > 0 && replicas > int64(pc.MaxInstances) {
		out = append(out, checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s: VirtualMachinePool %s has spec.replicas %d, more than max_instances %d: the runner never uses more than %d VMs, "+
				"the others run for nothing until it scales the pool down.", label, pc.Pool(), replicas, pc.MaxInstances, pc.MaxInstances),
			Evidence: []checks.Evidence{{Source: src, Detail: fmt.Sprintf("spec.replicas=%d", replicas)}},
			Fix: checks.Steps{
				checks.Say("Let the runner set spec.replicas (the guide starts the pool at 0), or raise max_instances in [runners.autoscaler] if the pool is meant to be that large:"),
				newD8k(pc).poolCmd("scale", "--replicas", "0"),
			},
		})
	}
	if _, ok, _ := unstructured.NestedMap(pool.Object, "spec", "virtualMachineTemplate", "spec"); !ok {
		out = append(out, checks.Finding{
			Cause:    fmt.Sprintf("%s: VirtualMachinePool %s has no spec.virtualMachineTemplate.spec: the pool cannot create a VM for any job.", label, pc.Pool()),
			Evidence: []checks.Evidence{{Source: src, Detail: "spec.virtualMachineTemplate.spec is absent"}},
			Fix:      checks.Text("Give the pool a virtualMachineTemplate with cpu, memory, blockDeviceRefs and the cloud-init provisioning, as the guide's code-runner-pool.yaml does."),
		})
	}
	disks, _, _ := unstructured.NestedSlice(pool.Object, "spec", "virtualDiskTemplates")
	sized := 0
	var unsized []string
	for _, d := range disks {
		m, _ := d.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "name")
		if size, _, _ := unstructured.NestedString(m, "spec", "persistentVolumeClaim", "size"); size != "" {
			sized++
		} else {
			unsized = append(unsized, orUnset(name))
		}
	}
	if sized == 0 {
		detail := "spec.virtualDiskTemplates is empty"
		if len(unsized) > 0 {
			detail = fmt.Sprintf("no persistentVolumeClaim.size in virtualDiskTemplates %v", unsized)
		}
		out = append(out, checks.Finding{
			Cause:    fmt.Sprintf("%s: VirtualMachinePool %s has no disk template with a size: its VMs get no disk to boot and to hold the jobs' working copies.", label, pc.Pool()),
			Evidence: []checks.Evidence{{Source: src, Detail: detail}},
			Fix:      checks.Text("Add a virtualDiskTemplates entry with dataSource.objectRef naming the VirtualImage and persistentVolumeClaim.size (the guide: 20Gi), referenced from blockDeviceRefs."),
		})
	}
	return out
}

// diskImages lists the images the pool's disk templates are filled from.
func diskImages(pool *unstructured.Unstructured) []diskImage {
	disks, _, _ := unstructured.NestedSlice(pool.Object, "spec", "virtualDiskTemplates")
	var out []diskImage
	for _, d := range disks {
		m, _ := d.(map[string]any)
		disk, _, _ := unstructured.NestedString(m, "name")
		kind, _, _ := unstructured.NestedString(m, "spec", "dataSource", "objectRef", "kind")
		name, _, _ := unstructured.NestedString(m, "spec", "dataSource", "objectRef", "name")
		if name != "" && (kind == "VirtualImage" || kind == "ClusterVirtualImage") {
			out = append(out, diskImage{Disk: disk, Kind: kind, Name: name})
		}
	}
	return out
}

func poolPath(pc configfacts.PluginConfig) string {
	return fmt.Sprintf("/apis/%s/%s/namespaces/%s/virtualmachinepools/%s", group, version, pc.Namespace, pc.Name)
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}
