// Command argocd-health judges an object's health with Argo CD's own code, the way
// `argocd admin settings resource-overrides health OBJECT --argocd-cm-path CM` does: Argo CD's
// SettingsManager reads the resource customizations from an argocd-cm ConfigMap (a file), and
// gitops-engine's health.GetResourceHealth runs the matching health Lua on Argo CD's Lua VM
// (util/lua). The object is JSON (or YAML) on stdin; the answer is one JSON line on stdout:
// {"status":"Healthy","message":"..."}. No customization for the object's kind is an error
// (exit 1), as is a script that fails, so a test cannot mistake "no check" for an answer.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/health"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// The names Argo CD's SettingsManager looks for in its namespace.
const (
	namespace  = "argocd"
	configMap  = "argocd-cm"
	secretName = "argocd-secret"
)

func main() {
	cmPath := flag.String("argocd-cm", "", "path of the argocd-cm ConfigMap (YAML or JSON) holding resource.customizations")
	flag.Parse()
	// The SettingsManager narrates its informers at info; stderr keeps errors only.
	log.SetLevel(log.WarnLevel)
	if *cmPath == "" {
		fail("--argocd-cm is required")
	}
	if err := run(*cmPath, os.Stdin, os.Stdout); err != nil {
		fail(err.Error())
	}
}

func run(cmPath string, in io.Reader, out io.Writer) error {
	data, err := os.ReadFile(cmPath)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		return fmt.Errorf("%s: %w", cmPath, err)
	}
	// As Argo CD's CLI does for --argocd-cm-path: the ConfigMap (and a placeholder secret) served
	// to the SettingsManager by a fake clientset, labelled as Argo CD's informers select them.
	cm.Name, cm.Namespace = configMap, namespace
	cm.Labels = map[string]string{"app.kubernetes.io/part-of": "argocd"}
	secret := &corev1.Secret{}
	secret.Name, secret.Namespace = secretName, namespace
	secret.Labels = cm.Labels
	secret.Data = map[string][]byte{"server.secretkey": []byte("harness")}
	mgr := settings.NewSettingsManager(context.Background(), fake.NewClientset(cm, secret), namespace)
	if err := mgr.ResyncInformers(); err != nil {
		return err
	}
	overrides, err := mgr.GetResourceOverrides()
	if err != nil {
		return fmt.Errorf("resource customizations: %w", err)
	}

	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &obj.Object); err != nil {
		return fmt.Errorf("object: %w", err)
	}
	result, err := health.GetResourceHealth(obj, lua.ResourceHealthOverrides(overrides))
	if err != nil {
		return fmt.Errorf("health check of %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	if result == nil {
		return fmt.Errorf("argocd-cm has no health check for %s", lua.GetConfigMapKey(obj.GroupVersionKind()))
	}
	return json.NewEncoder(out).Encode(map[string]string{"status": string(result.Status), "message": result.Message})
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "argocd-health:", msg)
	os.Exit(1)
}
