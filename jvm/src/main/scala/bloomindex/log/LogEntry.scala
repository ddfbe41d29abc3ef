package bloomindex.log

/**
 * One committed log entry: version N of the index's history. Written once, never changed.
 * `data` is set on ACTIVE entries (and kept on the transient entries that follow, so readers
 * can go on using the last good data).
 */
case class LogEntry(
    version: Long,
    state: String,
    operation: String,
    operationId: String,
    timestamp: Long,
    createdAt: Long,
    spec: IndexSpec,
    data: Option[IndexData])
