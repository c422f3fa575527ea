// The Flux oracle: builds Flux Kustomizations with kustomize-controller's own build code
// (fluxcd/pkg/kustomize's generator, SecureBuild and SubstituteVariables, fluxcd/pkg/ssa's
// owner labels and common metadata) after making the source's artifact with source-controller's
// own filter and archiver (fluxcd/pkg/sourceignore, fluxcd/pkg/artifact/storage) and unpacking it
// with fluxcd/pkg/tar, as kustomize-controller's reconcile does; an ExternalArtifact is made
// with source-watcher's own builder from the ArtifactGenerator that lists it. See README.md;
// build.sh builds it.
//
//	flux-oracle [--no-artifact] [--strict=false] [--normalize] [--nested=N] [--source KEY=DIR]... PKG...
//
// Each PKG is a directory (or a file) of YAML: the Flux Kustomizations to build, and the ConfigMaps,
// Secrets and GitRepositories a cluster would hold (postBuild.substituteFrom reads the first two
// through a stub of controller-runtime's client; a GitRepository's spec.ignore joins the
// artifact's ignore patterns). KEY names a Kustomization's sourceRef as NAME, NAMESPACE/NAME or
// KIND/NAMESPACE/NAME. Each Kustomization is built on its own, in file order, then the
// Kustomizations those builds produced (as applied: after the parent's patches, namespace,
// substitution and labels), round after round, each once; the ConfigMaps and Secrets a build
// produced are in the cluster for the builds after it. The result, one entry per Kustomization
// with its objects or the error kustomize-controller would report, is JSON on stdout.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	securejoin "github.com/cyphar/filepath-securejoin"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/artifact/storage"
	generator "github.com/fluxcd/pkg/kustomize"
	"github.com/fluxcd/pkg/sourceignore"
	"github.com/fluxcd/pkg/ssa"
	"github.com/fluxcd/pkg/ssa/normalize"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	"github.com/fluxcd/pkg/tar"
	swapi "github.com/fluxcd/source-watcher/api/v2/v1beta1"
	"github.com/fluxcd/source-watcher/v2/builder"
	pathpattern "github.com/fluxcd/source-watcher/v2/pathpattern"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

const group = "kustomize.toolkit.fluxcd.io"

type sourceFlags []string

func (s *sourceFlags) String() string     { return strings.Join(*s, ",") }
func (s *sourceFlags) Set(v string) error { *s = append(*s, v); return nil }

type result struct {
	Kustomization string                   `json:"kustomization"`
	AppliedBy     string                   `json:"appliedBy,omitempty"`
	Source        string                   `json:"source,omitempty"`
	Path          string                   `json:"path,omitempty"`
	Generated     string                   `json:"generated,omitempty"`
	Objects       []map[string]interface{} `json:"objects"`
	YAML          string                   `json:"yaml,omitempty"`
	Error         string                   `json:"error,omitempty"`
}

type output struct {
	Normalized bool     `json:"normalized,omitempty"`
	Strict     bool     `json:"strict"`
	Artifact   bool     `json:"artifact"`
	Results    []result `json:"results"`
}

func main() {
	var sources sourceFlags
	noArtifact := flag.Bool("no-artifact", false, "build from the source directory as it is, without source-controller's artifact (its ignore filter and archive)")
	nested := flag.Int("nested", 10, "rounds of building the Kustomizations that a build produces, as the cluster reconciles them once applied (0: none)")
	applied := flag.Bool("normalize", false, "go on as the controller's apply does: normalize the objects (ssa/normalize) before commonMetadata")
	strict := flag.Bool("strict", true, "StrictPostBuildSubstitutions (kustomize-controller's feature gate, on by default since v1.9.0)")
	flag.Var(&sources, "source", "KEY=DIR: the source a Kustomization's sourceRef names (NAME, NAMESPACE/NAME or KIND/NAMESPACE/NAME)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: flux-oracle [--no-artifact] [--strict=false] [--normalize] [--nested=N] [--source KEY=DIR]... PKG...")
		os.Exit(2)
	}
	var objs []*unstructured.Unstructured
	for _, arg := range flag.Args() {
		more, err := readDir(arg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flux-oracle:", err)
			os.Exit(2)
		}
		objs = append(objs, more...)
	}
	srcs := map[string]string{}
	for _, s := range sources {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			fmt.Fprintln(os.Stderr, "flux-oracle: --source wants KEY=DIR:", s)
			os.Exit(2)
		}
		abs, err := filepath.Abs(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "flux-oracle:", err)
			os.Exit(2)
		}
		srcs[k] = abs
	}
	cl := &stubClient{objects: objs}
	out := output{Normalized: *applied, Strict: *strict, Artifact: !*noArtifact, Results: []result{}}
	// The controller reconciles a Kustomization once every Kustomization its spec.dependsOn
	// names is ready: here, built without error. What a build applies is in the cluster for the
	// next ones (its ConfigMaps and Secrets for substituteFrom, its ArtifactGenerators) and its
	// Kustomizations are reconciled in turn, at most --nested builds deep. One whose
	// dependencies never become ready (failed, missing, a cycle) is not built.
	type pending struct {
		k     *unstructured.Unstructured
		by    string
		depth int
	}
	var todo []pending
	seen := map[string]bool{}
	for _, o := range objs {
		if isKustomization(o) {
			todo = append(todo, pending{k: o})
			seen[o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	ready := map[string]bool{}
	waitsFor := func(k *unstructured.Unstructured) []string {
		deps, _, _ := unstructured.NestedSlice(k.Object, "spec", "dependsOn")
		var ids []string
		for _, d := range deps {
			m, ok := d.(map[string]interface{})
			if !ok {
				continue
			}
			name, _ := m["name"].(string)
			ns, _ := m["namespace"].(string)
			if ns == "" {
				ns = k.GetNamespace()
			}
			ids = append(ids, ns+"/"+name)
		}
		return ids
	}
	for progress := true; progress; {
		progress = false
		for i, p := range todo {
			waiting := false
			for _, id := range waitsFor(p.k) {
				waiting = waiting || !ready[id]
			}
			if waiting {
				continue
			}
			todo = append(todo[:i:i], todo[i+1:]...)
			progress = true
			id := p.k.GetNamespace() + "/" + p.k.GetName()
			if p.depth > *nested {
				out.Results = append(out.Results, result{Kustomization: id, AppliedBy: p.by,
					Objects: []map[string]interface{}{}, Error: "oracle: not built (--nested rounds reached)"})
				break
			}
			r := buildOne(cl, cl.objects, srcs, p.k, *strict, !*noArtifact, *applied)
			r.AppliedBy = p.by
			out.Results = append(out.Results, r)
			ready[id] = r.Error == ""
			for _, m := range r.Objects {
				u := &unstructured.Unstructured{Object: m}
				cl.objects = append(cl.objects, u.DeepCopy())
				uid := u.GetNamespace() + "/" + u.GetName()
				if isKustomization(u) && !seen[uid] {
					seen[uid] = true
					todo = append(todo, pending{k: u.DeepCopy(), by: r.Kustomization, depth: p.depth + 1})
				}
			}
			break
		}
	}
	for _, p := range todo {
		out.Results = append(out.Results, result{Kustomization: p.k.GetNamespace() + "/" + p.k.GetName(), AppliedBy: p.by,
			Objects: []map[string]interface{}{}, Error: "oracle: not built (a dependency is not ready)"})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "flux-oracle:", err)
		os.Exit(2)
	}
}

func isKustomization(o *unstructured.Unstructured) bool {
	return o.GetKind() == "Kustomization" && strings.HasPrefix(o.GetAPIVersion(), group+"/")
}

// readDir reads every .yaml/.yml/.json file under path (or path itself) as a stream of objects.
func readDir(path string) ([]*unstructured.Unstructured, error) {
	var files []string
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			switch strings.ToLower(filepath.Ext(p)) {
			case ".yaml", ".yml", ".json":
				if !d.IsDir() {
					files = append(files, p)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Strings(files)
	} else {
		files = []string{path}
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var m map[string]interface{}
			if err := dec.Decode(&m); err != nil {
				if err == io.EOF {
					break
				}
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			if m == nil {
				continue
			}
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs, nil
}

// resolve finds the directory given for the source kind/ns/name, and the ignore patterns of the
// GitRepository (or other source) it names, if the package holds it.
func resolve(objs []*unstructured.Unstructured, srcs map[string]string, kind, ns, name string) (string, string, *string) {
	var ignore *string
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name && o.GetNamespace() == ns {
			if s, ok, _ := unstructured.NestedString(o.Object, "spec", "ignore"); ok {
				ignore = &s
			}
		}
	}
	for _, key := range []string{kind + "/" + ns + "/" + name, ns + "/" + name, name} {
		if d, ok := srcs[key]; ok {
			return key, d, ignore
		}
	}
	return "", "", ignore
}

// fetchSource lays out the artifact of the Kustomization's source in into, and says which
// --source it came from.
func fetchSource(objs []*unstructured.Unstructured, srcs map[string]string, obj *kustomizev1.Kustomization, into string, artifact bool) (string, error) {
	ref := obj.Spec.SourceRef
	ns := ref.Namespace
	if ns == "" {
		ns = obj.GetNamespace()
	}
	if ref.Kind == "ExternalArtifact" {
		return generateArtifact(objs, srcs, ns, ref.Name, into, artifact)
	}
	key, dir, ignore := resolve(objs, srcs, ref.Kind, ns, ref.Name)
	if dir == "" {
		return "", fmt.Errorf("oracle: no --source given for %s/%s/%s", ref.Kind, ns, ref.Name)
	}
	return key, layOut(dir, ignore, into, artifact)
}

// layOut puts the source directory's artifact (or, without the artifact step, a copy of it) in into.
func layOut(dir string, ignore *string, into string, artifact bool) error {
	var err error
	if artifact {
		err = makeArtifact(dir, ignore, into)
	} else {
		err = os.CopyFS(into, os.DirFS(dir))
	}
	if err != nil {
		return fmt.Errorf("oracle: artifact: %w", err)
	}
	return nil
}

// generateArtifact makes the ExternalArtifact NAME in namespace ns as source-watcher does, from
// the ArtifactGenerator in the package (or applied by a build) that lists it: each of the
// generator's sources laid out under a directory named after its alias, the artifacts its path
// pattern gives, then builder.Build's copy operations and archive; the archive is unpacked in into.
func generateArtifact(objs []*unstructured.Unstructured, srcs map[string]string, ns, name, into string, artifact bool) (string, error) {
	return generateChained(objs, srcs, ns, name, into, artifact, nil)
}

// generateChained is generateArtifact with the ExternalArtifacts being made (chain): a generator
// source that is an ExternalArtifact with no --source is made first, by its own generator, as
// source-watcher would once that artifact exists; one made from itself is an error.
func generateChained(objs []*unstructured.Unstructured, srcs map[string]string, ns, name, into string, artifact bool, chain []string) (string, error) {
	self := "ExternalArtifact/" + ns + "/" + name
	for _, c := range chain {
		if c == self {
			return "", fmt.Errorf("oracle: the ExternalArtifacts are made from each other: %s <- %s", strings.Join(chain, " <- "), self)
		}
	}
	chain = append(chain, self)
	for _, o := range objs {
		if o.GetKind() != "ArtifactGenerator" || !strings.HasPrefix(o.GetAPIVersion(), "source.extensions.fluxcd.io/") || o.GetNamespace() != ns {
			continue
		}
		gen := &swapi.ArtifactGenerator{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, gen); err != nil {
			return "", fmt.Errorf("oracle: ArtifactGenerator %s/%s: %w", ns, o.GetName(), err)
		}
		lists := gen.Spec.PathPattern != ""
		for _, a := range gen.Spec.OutputArtifacts {
			lists = lists || a.Name == name
		}
		if !lists {
			continue
		}
		workspace, err := os.MkdirTemp("", "ag-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(workspace)
		local := map[string]string{}
		var keys []string
		for _, src := range gen.Spec.Sources {
			sns := src.Namespace
			if sns == "" {
				sns = gen.Namespace
			}
			key, dir, ignore := resolve(objs, srcs, src.Kind, sns, src.Name)
			aliasDir := filepath.Join(workspace, src.Alias)
			if err := os.MkdirAll(aliasDir, 0o755); err != nil {
				return "", err
			}
			if dir == "" && src.Kind == "ExternalArtifact" {
				made, err := generateChained(objs, srcs, sns, src.Name, aliasDir, artifact, chain)
				if err != nil {
					return "", fmt.Errorf("oracle: ArtifactGenerator %s/%s, source @%s: %w", ns, gen.Name, src.Alias, err)
				}
				key = made
			} else if dir == "" {
				return "", fmt.Errorf("oracle: ArtifactGenerator %s/%s: no --source given for %s/%s/%s", ns, gen.Name, src.Kind, sns, src.Name)
			} else if err := layOut(dir, ignore, aliasDir, artifact); err != nil {
				return "", err
			}
			local[src.Alias] = aliasDir
			keys = append(keys, src.Alias+"="+key)
		}
		outputs, err := pathpattern.BuildArtifactRequests(gen, local)
		if err != nil {
			return "", fmt.Errorf("failed to expand path pattern: %s", strings.ReplaceAll(err.Error(), workspace, "<workspace>"))
		}
		for i := range outputs {
			oa := outputs[i]
			if oa.Name != name {
				continue
			}
			store, err := os.MkdirTemp("", "storage-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(store)
			st := &storage.Storage{BasePath: store, Hostname: "source-watcher"}
			art, err := builder.New(st).Build(context.Background(), &oa, local, gen.Namespace, workspace)
			if err != nil {
				msg := strings.NewReplacer(workspace, "<workspace>", store, "<storage>").Replace(err.Error())
				return "", fmt.Errorf("%s build failed: %s", oa.Name, msg)
			}
			f, err := os.Open(st.LocalPath(*art))
			if err != nil {
				return "", err
			}
			defer f.Close()
			if err := tar.Untar(f, into, tar.WithMaxUntarSize(tar.UnlimitedUntarSize)); err != nil {
				return "", err
			}
			return "ArtifactGenerator/" + ns + "/" + gen.Name + " (" + strings.Join(keys, ", ") + ")", nil
		}
	}
	return "", fmt.Errorf("oracle: no ArtifactGenerator in %s makes the ExternalArtifact %s", ns, name)
}

// stored is the Kustomization as kustomize-controller reads it: the API server keeps it as v1
// (the only version v1.9 serves) without the fields v1 does not have, and the controller decodes
// it into its typed object and turns that back into the unstructured object it gives the
// generator and SubstituteVariables.
func stored(k *unstructured.Unstructured) (*kustomizev1.Kustomization, *unstructured.Unstructured, error) {
	in := k.DeepCopy()
	in.SetAPIVersion(kustomizev1.GroupVersion.String())
	obj := &kustomizev1.Kustomization{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(in.Object, obj); err != nil {
		return nil, nil, fmt.Errorf("oracle: the API server would refuse this Kustomization: %w", err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, nil, err
	}
	return obj, &unstructured.Unstructured{Object: u}, nil
}

func buildOne(cl client.Client, objs []*unstructured.Unstructured, srcs map[string]string, k *unstructured.Unstructured, strict, artifact, applied bool) result {
	r := result{Kustomization: k.GetNamespace() + "/" + k.GetName(), Objects: []map[string]interface{}{}}
	obj, u, err := stored(k)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Path = obj.Spec.Path
	tmpDir, err := os.MkdirTemp("", "kustomization-")
	if err != nil {
		r.Error = "tmp dir error: " + err.Error()
		return r
	}
	defer os.RemoveAll(tmpDir)
	if r.Source, err = fetchSource(objs, srcs, obj, tmpDir, artifact); err != nil {
		r.Error = strings.ReplaceAll(err.Error(), tmpDir, "<artifact>")
		return r
	}

	// kustomize-controller's reconcile: the build path inside the artifact.
	dirPath, err := securejoin.SecureJoin(tmpDir, obj.Spec.Path)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if _, err := os.Stat(dirPath); err != nil {
		r.Error = strings.ReplaceAll(fmt.Errorf("kustomization path not found: %w", err).Error(), tmpDir, "<artifact>")
		return r
	}
	if _, err := generator.NewGenerator(tmpDir, *u).WriteFile(dirPath); err != nil {
		r.Error = strings.ReplaceAll(err.Error(), tmpDir, "<artifact>")
		return r
	}
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if b, err := os.ReadFile(filepath.Join(dirPath, name)); err == nil {
			r.Generated = string(b)
			break
		}
	}
	resources, err := build(cl, obj, *u, tmpDir, dirPath, strict)
	if err != nil {
		r.Error = strings.ReplaceAll(err.Error(), tmpDir, "<artifact>")
		return r
	}
	objects, err := ssautil.ReadObjects(bytes.NewReader(resources))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	manager := ssa.NewResourceManager(ssa.Owner{Field: "kustomize-controller", Group: group})
	manager.SetOwnerLabels(objects, obj.GetName(), obj.GetNamespace())
	if applied {
		// The controller's apply: normalize, then commonMetadata.
		if err := normalize.UnstructuredList(objects); err != nil {
			r.Error = err.Error()
			return r
		}
	}
	if cmeta := obj.Spec.CommonMetadata; cmeta != nil {
		ssautil.SetCommonMetadata(objects, cmeta.Labels, cmeta.Annotations)
	}
	for _, o := range objects {
		r.Objects = append(r.Objects, o.Object)
	}
	// The text `flux build kustomization` prints for these objects.
	if r.YAML, err = ssautil.ObjectsToYAML(objects); err != nil {
		r.Error = err.Error()
	}
	return r
}

// makeArtifact archives dir as source-controller's GitRepository reconciler does (its
// .sourceignore files and spec.ignore, or the default excludes when there are none) and unpacks
// the archive into into, as kustomize-controller's fetcher does.
func makeArtifact(dir string, ignore *string, into string) error {
	store, err := os.MkdirTemp("", "artifact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(store)
	ignoreDomain := strings.Split(dir, string(filepath.Separator))
	ps, err := sourceignore.LoadIgnorePatterns(dir, ignoreDomain)
	if err != nil {
		return fmt.Errorf("failed to load source ignore patterns from repository: %w", err)
	}
	if ignore != nil {
		ps = append(ps, sourceignore.ReadPatterns(strings.NewReader(*ignore), ignoreDomain)...)
	}
	st := storage.Storage{BasePath: store}
	art := meta.Artifact{Path: "artifact.tar.gz"}
	if err := st.Archive(&art, dir, storage.SourceIgnoreFilter(ps, ignoreDomain)); err != nil {
		return fmt.Errorf("unable to archive artifact to storage: %w", err)
	}
	f, err := os.Open(st.LocalPath(art))
	if err != nil {
		return err
	}
	defer f.Close()
	return tar.Untar(f, into, tar.WithMaxUntarSize(tar.UnlimitedUntarSize))
}

// build is kustomize-controller's build (internal/controller/kustomization_controller.go) without
// SOPS decryption: SecureBuild with remote bases allowed (the controller's default), the
// Kubernetes-object check, and the post-build substitutions.
func build(cl client.Client, obj *kustomizev1.Kustomization, u unstructured.Unstructured, workDir, dirPath string, strict bool) ([]byte, error) {
	if obj.Spec.Decryption != nil {
		return nil, fmt.Errorf("oracle: spec.decryption is not supported")
	}
	m, err := generator.SecureBuild(workDir, dirPath, true)
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	for _, res := range m.Resources() {
		if res.GetName() == "" || res.GetKind() == "" || res.GetApiVersion() == "" {
			return nil, fmt.Errorf("failed to decode Kubernetes apiVersion, kind and name from: %v", res.String())
		}
		if obj.Spec.PostBuild != nil {
			always := obj.GetSubstituteStrategy() == kustomizev1.SubstituteStrategyAlways
			outRes, err := generator.SubstituteVariables(context.Background(), cl, u, res,
				generator.SubstituteWithStrict(strict),
				generator.SubstituteWithAlways(always))
			if err != nil {
				return nil, fmt.Errorf("post build failed for '%s/%s': %w", res.GetGvk(), res.GetName(), err)
			}
			if outRes != nil {
				if _, err = m.Replace(res); err != nil {
					return nil, err
				}
			}
		}
	}
	resources, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build failed: %w", err)
	}
	return resources, nil
}

// stubClient answers Get for the ConfigMaps and Secrets of the package and of the builds so far
// as the API server would (the last one applied; a Secret's stringData merged into its data).
type stubClient struct {
	objects []*unstructured.Unstructured
}

func (c *stubClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	var kind, resource string
	switch obj.(type) {
	case *corev1.ConfigMap:
		kind, resource = "ConfigMap", "configmaps"
	case *corev1.Secret:
		kind, resource = "Secret", "secrets"
	default:
		return fmt.Errorf("oracle: the stub client reads ConfigMaps and Secrets only")
	}
	for i := len(c.objects) - 1; i >= 0; i-- {
		o := c.objects[i]
		if o.GetAPIVersion() != "v1" || o.GetKind() != kind || o.GetName() != key.Name || o.GetNamespace() != key.Namespace {
			continue
		}
		b, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		if err := yaml.Unmarshal(b, obj); err != nil {
			return err
		}
		if s, ok := obj.(*corev1.Secret); ok && len(s.StringData) > 0 {
			if s.Data == nil {
				s.Data = map[string][]byte{}
			}
			for k, v := range s.StringData {
				s.Data[k] = []byte(v)
			}
			s.StringData = nil
		}
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{Resource: resource}, key.Name)
}
