//go:build integration

package testenv

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// AggregateClusterRoles fills the aggregated ClusterRoles (view, edit,
// admin) with the rules of the roles their aggregationRule selects, as
// kube-controller-manager's clusterrole-aggregation controller does
// (pkg/controller/clusterroleaggregation, v1.37.2). This environment runs
// no controller-manager, so without it the built-in view role the apiserver
// bootstraps has no rules at all and grants nothing.
func (e *Env) AggregateClusterRoles() {
	ctx, cancel := e.ctx()
	defer cancel()
	roles, err := e.Clientset().RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	e.check(err)
	for i := range roles.Items {
		role := &roles.Items[i]
		if role.AggregationRule == nil {
			continue
		}
		var rules []rbacv1.PolicyRule
		for _, sel := range role.AggregationRule.ClusterRoleSelectors {
			s, err := metav1.LabelSelectorAsSelector(&sel)
			e.check(err)
			for j := range roles.Items {
				src := &roles.Items[j]
				if src.Name == role.Name || !s.Matches(labels.Set(src.Labels)) {
					continue
				}
				for _, r := range src.Rules {
					if !slices.ContainsFunc(rules, func(have rbacv1.PolicyRule) bool { return equality.Semantic.DeepEqual(have, r) }) {
						rules = append(rules, r)
					}
				}
			}
		}
		role.Rules = rules
		_, err := e.Clientset().RbacV1().ClusterRoles().Update(ctx, role, metav1.UpdateOptions{})
		e.check(err)
	}
}

// BindUserToClusterRole binds one user, cluster-wide, to a ClusterRole.
func (e *Env) BindUserToClusterRole(user, role string) {
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.Clientset().RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + ":" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}, metav1.CreateOptions{})
	e.check(err)
}
