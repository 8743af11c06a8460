package kubelet

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/hostio/atomicfile"
)

// The log reads need pod names, and only kube-system's list gives them: a
// cold run waits one round trip for it before it can send them, the one
// second round trip of a cluster with nodes. doctor remembers, under
// Env.CacheDir, the pods it read on each target, and sends those reads
// with the run's first requests. The check still chooses its pods from this
// run's lists (PodOn); a remembered read it then asks for again is found
// done (ReadShared), and one it does not ask for (the pod is gone, or
// another pod is now the node's best) is never looked at. So the cache
// changes when a read leaves, never what the check reports.

const (
	cacheName    = "kubelet-reach.json"
	cacheVersion = 1
	// cacheMaxSize bounds the file read: 32 targets of MaxNodes pods are
	// about 20 KiB.
	cacheMaxSize = 256 << 10
	// cacheFresh is how long a target's pods are trusted: rented nodes come
	// and go within a day, and a stale read is a wasted request.
	cacheFresh = 24 * time.Hour
	// cacheTargets bounds the file: the targets saved most recently are kept.
	cacheTargets = 32
)

type cacheFile struct {
	Version int                     `json:"version"`
	Targets map[string]cachedTarget `json:"targets"` // by kubefacts.APIClient.Key: the server and a hash of the credential
}

type cachedTarget struct {
	Saved time.Time   `json:"saved"`
	Pods  []cachedPod `json:"pods"`
}

// cachedPod is one read: the pod, the container read, and the node it ran
// on (for whoever reads the file; the read does not need it).
type cachedPod struct {
	Node      string `json:"node"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Container string `json:"container"`
}

func (c cachedPod) valid() bool {
	return c.Node != "" && len(validation.IsDNS1123Label(c.Namespace)) == 0 &&
		len(validation.IsDNS1123Subdomain(c.Name)) == 0 && len(validation.IsDNS1123Label(c.Container)) == 0
}

// RememberedReads is what the last run saved for a target.
type RememberedReads struct {
	Saved time.Time
	Pods  []cachedPod
}

// caching says whether this run keeps a cache: not without a directory,
// not offline, and not on a bundle's replay, whose answers are the tape's.
func caching(env *hostio.Env) bool {
	return env.CacheDir != "" && !env.Offline && (env.Tape == nil || !env.Tape.Replay)
}

// cacheMu orders the load, modify and save of the file between the targets
// of one run; two doctor processes race only to the last rename.
var cacheMu sync.Mutex

// loadCache reads the file; anything wrong with it (missing, not a regular
// file, too large, not this version's JSON) is an empty cache, logged at
// -v 2, never a finding: it is doctor's own file, not the runner's.
func loadCache(env *hostio.Env) cacheFile {
	path := filepath.Join(env.CacheDir, cacheName)
	empty := cacheFile{Version: cacheVersion, Targets: map[string]cachedTarget{}}
	// Only a directory no one else may write holds a file worth reading.
	err := atomicfile.PrivateDir(env.CacheDir)
	var b []byte
	if err == nil {
		b, err = atomicfile.Read(path, cacheMaxSize)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return empty
	}
	var c cacheFile
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil && c.Version != cacheVersion {
		err = errors.New("another format version")
	}
	if err != nil {
		env.Logf(2, "cache %s: %v; not used", path, err)
		return empty
	}
	if c.Targets == nil {
		c.Targets = map[string]cachedTarget{}
	}
	return c
}

// rememberedFor is the target's pods, when they were saved within
// cacheFresh; at most MaxNodes, and only well-formed names.
func rememberedFor(env *hostio.Env, key string) *RememberedReads {
	cacheMu.Lock()
	t, ok := loadCache(env).Targets[key]
	cacheMu.Unlock()
	if !ok || time.Since(t.Saved) > cacheFresh || time.Since(t.Saved) < 0 {
		return &RememberedReads{}
	}
	r := &RememberedReads{Saved: t.Saved}
	for _, c := range t.Pods {
		if c.valid() && len(r.Pods) < MaxNodes {
			r.Pods = append(r.Pods, c)
		}
	}
	return r
}

// RememberedReadsFact sends the reads of the pods the last run read on this
// target, with the run's first requests, and returns without waiting for
// them: the check waits only for the reads it asks for.
var RememberedReadsFact = &checks.Fact[*RememberedReads]{
	ID:       "kubelet-reach-remembered-reads",
	Doc:      "the log reads of the pods the last run read on this target (--cache-dir), sent with the first requests",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*RememberedReads, error) {
		if !caching(p.Env) {
			return &RememberedReads{}, nil
		}
		api := kubefacts.APIClientFact.Get(p)
		return checks.Shared(p, "kubelet-reach remembered "+api.Key, func() (*RememberedReads, error) {
			r := rememberedFor(p.Env, api.Key)
			// The reads outlive this fact, whose context ends when it
			// returns; each is still bounded by its own timeout.
			ctx := context.WithoutCancel(p.Context)
			timeout := ReadTimeout(p)
			for _, c := range r.Pods {
				pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: c.Container}}}}
				go ReadShared(p, ctx, api.TapeKey, api.Client, pod, timeout)
			}
			return r, nil
		})
	},
}

// Remember saves the pods whose log the apiserver served this run, once
// per target, when they differ from what was remembered or that is half
// way to stale. A node whose kubelet did not answer is not remembered: its
// read is the check's to send.
func Remember(p *checks.Pass, key string, last *RememberedReads, probes []*Probe) {
	if !caching(p.Env) || last == nil {
		return
	}
	var pods []cachedPod
	for _, pr := range probes {
		if pr.Pod != nil && Classify(pr.Err).Kind == Reachable {
			pods = append(pods, cachedPod{Node: pr.Node.Name, Namespace: pr.Pod.Namespace, Name: pr.Pod.Name, Container: containerOf(pr.Pod)})
		}
	}
	if !needsSave(pods, last, time.Now()) {
		return
	}
	checks.Shared(p, "kubelet-reach remember "+key, func() (struct{}, error) {
		if err := saveCache(p.Env, key, pods); err != nil {
			p.Env.Logf(2, "cache %s: %v; not saved", filepath.Join(p.Env.CacheDir, cacheName), err)
		}
		return struct{}{}, nil
	})
}

// needsSave says whether this run's pods are worth a write (a rename and
// two fsyncs): when they differ from the remembered ones, or those are half
// way to stale. A cron every five minutes then writes about once in 12 hours.
// Nothing read and nothing remembered is nothing to write.
func needsSave(pods []cachedPod, last *RememberedReads, now time.Time) bool {
	if len(pods) == 0 && len(last.Pods) == 0 {
		return false
	}
	return !slices.Equal(pods, last.Pods) || now.Sub(last.Saved) >= cacheFresh/2
}

func saveCache(env *hostio.Env, key string, pods []cachedPod) error {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	c := loadCache(env)
	if len(pods) == 0 {
		delete(c.Targets, key)
	} else {
		c.Targets[key] = cachedTarget{Saved: time.Now().UTC(), Pods: pods}
	}
	if len(c.Targets) > cacheTargets {
		keys := make([]string, 0, len(c.Targets))
		for k := range c.Targets {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return c.Targets[keys[i]].Saved.After(c.Targets[keys[j]].Saved) })
		for _, k := range keys[cacheTargets:] {
			delete(c.Targets, k)
		}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(env.CacheDir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.PrivateDir(env.CacheDir); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(env.CacheDir, cacheName), append(b, '\n'))
}
