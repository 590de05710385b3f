package main

// The Echo kind (mmontes.io/v1alpha1), written by hand: the four types a kubebuilder project
// would generate (controller-gen's deepcopy included), so that the cache holds typed objects as
// in a generated project, not unstructured maps.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var groupVersion = schema.GroupVersion{Group: "mmontes.io", Version: "v1alpha1"}

type EchoSpec struct {
	Message string `json:"message"`
}

type EchoStatus struct {
	Phase              string             `json:"phase,omitempty"`
	JobName            string             `json:"jobName,omitempty"`
	StartTime          *metav1.Time       `json:"startTime,omitempty"`
	CompletionTime     *metav1.Time       `json:"completionTime,omitempty"`
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
}

type Echo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              EchoSpec   `json:"spec"`
	Status            EchoStatus `json:"status,omitempty"`
}

type EchoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Echo `json:"items"`
}

func (in *EchoStatus) DeepCopyInto(out *EchoStatus) {
	*out = *in
	if in.StartTime != nil {
		out.StartTime = in.StartTime.DeepCopy()
	}
	if in.CompletionTime != nil {
		out.CompletionTime = in.CompletionTime.DeepCopy()
	}
	if in.Conditions != nil {
		out.Conditions = make([]metav1.Condition, len(in.Conditions))
		for i := range in.Conditions {
			in.Conditions[i].DeepCopyInto(&out.Conditions[i])
		}
	}
}

func (in *Echo) DeepCopyInto(out *Echo) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	in.Status.DeepCopyInto(&out.Status)
}

func (in *Echo) DeepCopy() *Echo {
	if in == nil {
		return nil
	}
	out := new(Echo)
	in.DeepCopyInto(out)
	return out
}

func (in *Echo) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *EchoList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(EchoList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Echo, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

func addEchoTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(groupVersion, &Echo{}, &EchoList{})
	metav1.AddToGroupVersion(scheme, groupVersion)
	return nil
}
