local values = std.extVar('values');
{
  cluster_name: values.cluster.name,
  worker_config_patches: [
    { op: 'add', path: '/machine/nodeLabels/worker' + i, value: 'yes' }
    for i in std.range(1, values.cluster.workers.count)
  ],
}
