package main

// What the operator writes, computed as src/controllers/echo/desired.ts and status.ts compute
// it: the same Job name, labels, owner reference and pod template, and the same status fields.
// The bench checks the two agree (scripts/lab/bench/peers.ts compares the objects each one made).

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const (
	echoLabel           = "mmontes.io/echo"
	managedByLabel      = "app.kubernetes.io/managed-by"
	jobBackoffLimit     = 3
	runAs               = 65532
	succeededCondition  = "Succeeded"
	reconciledCondition = "Reconciled"
)

// shortHash: 10 base-36 characters of SHA-256 over the parts joined by NUL (naming.ts).
func shortHash(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	s := strconv.FormatUint(binary.BigEndian.Uint64(sum[:8]), 36)
	for len(s) < 13 {
		s = "0" + s
	}
	return s[len(s)-10:]
}

func derivedName(base, hash string, maxLength int) string {
	room := maxLength - len(hash) - 1
	head := strings.ReplaceAll(base, ".", "-")
	if len(head) > room {
		head = head[:room]
	}
	head = strings.TrimRight(head, "-")
	if head == "" {
		head = "x"
	}
	return head + "-" + hash
}

func jobNameFor(echo *Echo) string {
	return derivedName(echo.Name, shortHash(string(echo.UID), echo.Spec.Message), 63)
}

func labelValue(v string) string {
	if len(v) <= 63 {
		return v
	}
	head := strings.TrimRightFunc(v[:52], func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	out := head + "-" + strconv.FormatInt(int64(len(v)), 36) + v[len(v)-5:]
	if len(out) > 63 {
		out = out[:63]
	}
	return out
}

func desiredJob(echo *Echo, image string) *batchv1.Job {
	labels := map[string]string{
		managedByLabel:                "echoperator",
		"app.kubernetes.io/name":      "echoperator",
		"app.kubernetes.io/component": "echo",
		echoLabel:                     labelValue(echo.Name),
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name:      jobNameFor(echo),
			Namespace: echo.Namespace,
			Labels:    labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         groupVersion.String(),
				Kind:               "Echo",
				Name:               echo.Name,
				UID:                echo.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](jobBackoffLimit),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					AutomountServiceAccountToken: ptr.To(false),
					EnableServiceLinks:           ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To[int64](runAs),
						RunAsGroup:     ptr.To[int64](runAs),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:    "echo",
						Image:   image,
						Command: []string{"printf", `%s\n`, echo.Spec.Message},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("10m"),
								corev1.ResourceMemory: resource.MustParse("16Mi"),
							},
							Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("32Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

func jobCondition(job *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	if job == nil {
		return nil
	}
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

// runState: the phase and the Succeeded condition of the run (status.ts runState).
func runState(job *batchv1.Job, name string) (string, metav1.Condition) {
	cond := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: succeededCondition, Status: status, Reason: reason, Message: message}
	}
	complete, failed := jobCondition(job, batchv1.JobComplete), jobCondition(job, batchv1.JobFailed)
	switch {
	case (job == nil || job.Status.StartTime == nil) && complete == nil && failed == nil:
		return "Pending", cond(metav1.ConditionUnknown, "JobPending", "Job "+name+" has not started yet")
	case complete != nil:
		return "Succeeded", cond(metav1.ConditionTrue, "JobComplete", "Job "+name+" printed the message")
	case failed != nil:
		reason, message := failed.Reason, failed.Message
		if reason == "" {
			reason = "JobFailed"
		}
		if message == "" {
			message = "Job " + name + " failed"
		}
		return "Failed", cond(metav1.ConditionFalse, reason, message)
	default:
		return "Running", cond(metav1.ConditionUnknown, "JobRunning", "Job "+name+" is running")
	}
}

var reconciledOk = metav1.Condition{Type: reconciledCondition, Status: metav1.ConditionTrue, Reason: "Reconciled", Message: "The Job matches the Echo"}

// desiredStatus: the Echo's status for its current run (status.ts echoStatus); conditions keep
// their lastTransitionTime unless their status changes (meta.SetStatusCondition, as ours).
func desiredStatus(echo *Echo, jobName string, job *batchv1.Job, reconciled metav1.Condition) EchoStatus {
	phase, succeeded := runState(job, jobName)
	status := EchoStatus{Phase: phase, JobName: jobName, ObservedGeneration: echo.Generation}
	if job != nil {
		status.StartTime = job.Status.StartTime
		if phase == "Succeeded" {
			status.CompletionTime = job.Status.CompletionTime
		}
	}
	status.Conditions = append([]metav1.Condition(nil), echo.Status.Conditions...)
	for _, c := range []metav1.Condition{succeeded, reconciled} {
		c.ObservedGeneration = echo.Generation
		meta.SetStatusCondition(&status.Conditions, c)
	}
	return status
}

func isFinished(phase string) bool { return phase == "Succeeded" || phase == "Failed" }
