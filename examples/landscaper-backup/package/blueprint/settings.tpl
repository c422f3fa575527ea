{{- /* The GoTemplate variant of settings.hbs: the same ConfigMap (tests/cli.rs renders both).
   Names with dashes are read with index; a missing optional import is empty for `with`. */ -}}
resources:
  - apiVersion: v1
    kind: ConfigMap
    metadata:
      name: backup-settings
    data:
      schedule: {{ .imports.schedule | quote }}
      storage: {{ with index .imports "backup-storage-url" }}{{ quote . }}{{ else }}none{{ end }}
