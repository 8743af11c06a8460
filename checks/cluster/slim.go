package cluster

import corev1 "k8s.io/api/core/v1"

// What a list keeps of its objects. Each object is decoded whole, but the
// parts no check reads are let go at once, so a big cluster's lists do not
// hold them while every other list is read: managedFields (the server's
// field bookkeeping, often the largest part of a pod) and a node's cached
// image list (up to 50 images, each with its digests). At 1,000 nodes and
// 10,000 pods they were a fifth of the run's live heap (bench/RESULTS.md).
// The bundle records the answers as the server sent them, before decoding,
// so nothing of this is lost to analyze.

func slimPods(ps []corev1.Pod) []corev1.Pod {
	for i := range ps {
		ps[i].ManagedFields = nil
	}
	return ps
}

func slimNodes(ns []corev1.Node) []corev1.Node {
	for i := range ns {
		ns[i].ManagedFields = nil
		ns[i].Status.Images = nil
	}
	return ns
}

func slimEvents(es []corev1.Event) []corev1.Event {
	for i := range es {
		es[i].ManagedFields = nil
	}
	return es
}

// appendPage adds a page to a list: the first page is the list, not a copy
// of it (a page of 500 pods is half a megabyte of structs).
func appendPage[T any](to, page []T) []T {
	if to == nil {
		return page
	}
	return append(to, page...)
}
