// A function of the values: they arrive as the top-level argument too.
function(values) { replicas: values.cluster.workers.count * 2 }
