// Talos machine patches: one label per worker, and an odd number of control planes.
function(values)
  local workers = values.cluster.workers.count;
  {
    control_planes: if workers > 2 then 3 else 1,
    worker_patches: [
      { op: 'add', path: '/machine/nodeLabels/pool', value: values.cluster.name + '-' + i }
      for i in std.range(1, workers)
    ],
  }
