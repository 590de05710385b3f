package main

// The Echo reconciler, as a controller-runtime user writes it: read the Echo and its Jobs from
// the manager's cache, create the Job that is missing, delete a previous message's Job, patch
// the status when it changed, and record the same Events as the operator (JobCreated,
// PreviousRunDeleted, RunSucceeded/RunFailed, ReconcileFailed).
//
// Two styles (PEER_STYLE), the same in everything else:
//   - naive (the default, what the benchmarks run): the cached Echo is the only memory of a run,
//     and status is a merge patch without the resourceVersion;
//   - advised (advised.go): as controller-runtime's docs and the kubebuilder book advise for a
//     controller whose action must not repeat: uncached reads (the manager's APIReader) where the
//     cache may be stale, the run claimed in status with an optimistic lock (an update carrying
//     the resourceVersion) before the create, and every status write so locked.

import (
	"context"
	"errors"
	"fmt"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// jobOwnerKey indexes Jobs by their controller's UID (the kubebuilder CronJob tutorial's pattern).
const jobOwnerKey = ".metadata.controller.uid"

func jobOwnerIndex(o client.Object) []string {
	if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "Echo" && ref.APIVersion == groupVersion.String() {
		return []string{string(ref.UID)}
	}
	return nil
}

type EchoReconciler struct {
	client.Client
	Recorder record.EventRecorder
	JobImage string
	// Advised: the advised style (advised.go); APIReader reads past the cache (mgr.GetAPIReader()).
	Advised   bool
	APIReader client.Reader
}

func (r *EchoReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var echo Echo
	if err := r.Get(ctx, req.NamespacedName, &echo); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !echo.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if err := r.reconcile(ctx, &echo); err != nil {
		if errors.Is(err, errCacheBehind) {
			// The server has a newer Echo than the cache: wait for the cache, as the docs advise.
			return ctrl.Result{RequeueAfter: cacheBehindRetry}, nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsTooManyRequests(err) {
			r.reportFailure(ctx, &echo, err)
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func (r *EchoReconciler) reconcile(ctx context.Context, echo *Echo) error {
	jobName := jobNameFor(echo)
	var owned batchv1.JobList
	if err := r.List(ctx, &owned, client.InNamespace(echo.Namespace), client.MatchingFields{jobOwnerKey: string(echo.UID)}); err != nil {
		return err
	}
	var job *batchv1.Job
	checked := false
	for i := range owned.Items {
		j := &owned.Items[i]
		if j.Name == jobName {
			job = j
			continue
		}
		if !checked {
			if err := r.confirmFresh(ctx, echo, "delete"); err != nil {
				return err
			}
			checked = true
		}
		err := r.Delete(ctx, j, client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &j.UID})
		if client.IgnoreNotFound(err) != nil {
			return err
		}
		if err == nil {
			r.Recorder.Eventf(echo, corev1.EventTypeNormal, "PreviousRunDeleted", "Deleted Job %s of the previous message", j.Name)
		}
	}
	if job == nil && r.Advised {
		live, err := r.claimRun(ctx, echo, jobName)
		if err != nil {
			return err
		}
		job = live
	}
	if job == nil && echo.Status.JobName == jobName && isFinished(echo.Status.Phase) {
		return nil // the run happened and its Job was removed since: do not repeat it
	}
	if job == nil {
		created, err := r.createJob(ctx, echo)
		if err != nil {
			return err
		}
		job = created
	}
	desired := desiredStatus(echo, jobName, job, reconciledOk)
	if equality.Semantic.DeepEqual(desired, echo.Status) {
		return nil
	}
	before := echo.DeepCopy()
	echo.Status = desired
	if err := r.writeStatus(ctx, echo, before); err != nil {
		return err
	}
	if desired.Phase != before.Status.Phase {
		switch desired.Phase {
		case "Succeeded":
			r.Recorder.Eventf(echo, corev1.EventTypeNormal, "RunSucceeded", "Job %s printed the message", jobName)
		case "Failed":
			why := "the Job failed"
			if c := jobCondition(job, batchv1.JobFailed); c != nil && c.Message != "" {
				why = c.Message
			}
			r.Recorder.Eventf(echo, corev1.EventTypeWarning, "RunFailed", "Job %s failed: %s", jobName, why)
		}
	}
	return nil
}

func (r *EchoReconciler) createJob(ctx context.Context, echo *Echo) (*batchv1.Job, error) {
	job := desiredJob(echo, r.JobImage)
	err := r.Create(ctx, job)
	if err == nil {
		log.FromContext(ctx).Info("job created", "job", job.Name)
		r.Recorder.Eventf(echo, corev1.EventTypeNormal, "JobCreated", "Created Job %s to print the message", job.Name)
		return job, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	// Made by an earlier pass whose watch event has not reached the cache yet.
	var existing batchv1.Job
	if err := r.Get(ctx, client.ObjectKeyFromObject(job), &existing); err != nil {
		return nil, err
	}
	if ref := metav1.GetControllerOf(&existing); ref == nil || ref.UID != echo.UID {
		return nil, fmt.Errorf("Job %s/%s already exists and is not controlled by this Echo; delete or rename it", job.Namespace, job.Name)
	}
	return &existing, nil
}

// reportFailure: Reconciled=False with the error, and a Warning Event (failure.ts reportFailure).
func (r *EchoReconciler) reportFailure(ctx context.Context, echo *Echo, cause error) {
	msg := cause.Error()
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	r.Recorder.Event(echo, corev1.EventTypeWarning, "ReconcileFailed", msg)
	reason := "ReconcileError"
	if apierrors.IsForbidden(cause) {
		reason = "Forbidden"
	}
	before := echo.DeepCopy()
	meta.SetStatusCondition(&echo.Status.Conditions, metav1.Condition{
		Type: reconciledCondition, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: echo.Generation,
	})
	if err := r.Status().Patch(ctx, echo, client.MergeFrom(before)); err != nil {
		log.FromContext(ctx).V(1).Info("could not record the failure in status", "error", err.Error())
	}
}
