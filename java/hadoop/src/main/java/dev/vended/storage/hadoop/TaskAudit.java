package dev.vended.storage.hadoop;

import dev.vended.storage.AuditContext;

import java.lang.reflect.Method;

import org.apache.hadoop.fs.audit.AuditConstants;
import org.apache.hadoop.fs.audit.CommonAuditContext;

/**
 * The audit context of the calling thread's requests (see {@link AuditContext}): the ids of the
 * job and task the thread works for, which the native side appends to the {@code User-Agent} of
 * the requests this thread starts, after the table's own agent ({@link AuditAgent}):
 *
 * <pre>{@code [job/<job id>] [spark-sql/<execution id>] spark-task/<stage>.<partition>.<attempt> spark-tid/<task attempt id>}</pre>
 *
 * <ul>
 *   <li>{@code job/}: the job id Hadoop's committers put in the thread's {@link
 *       CommonAuditContext} under {@value AuditConstants#PARAM_JOB_ID} (the key S3A's audit
 *       header calls {@code ji}; Spark's write jobs set it to their job UUID), when set;
 *   <li>{@code spark-sql/}: the Spark local property {@code spark.sql.execution.id} of the task
 *       (the SQL query execution, as in the Spark UI), when set;
 *   <li>{@code spark-task/}: Spark's {@code TaskContext} stage id, partition id and attempt number;
 *       {@code spark-tid/}: its task attempt id (unique in the application). Present only on a
 *       thread running a Spark task ({@code org.apache.spark.TaskContext.get()}, looked up
 *       reflectively: Spark is not a dependency).
 * </ul>
 *
 * <p>{@link #update()} is called at every FileSystem operation; it tells the native side only when
 * the thread's context changed (cached per thread). A stream read on a thread carries the context
 * that thread last had at a FileSystem operation. Ids only: never a secret.
 */
final class TaskAudit {

    /** {@code TaskContext.get}, {@code stageId}, {@code partitionId}, {@code attemptNumber},
     * {@code taskAttemptId}, {@code getLocalProperty}; null without Spark. */
    private static final Method[] SPARK = sparkMethods();

    private TaskAudit() {}

    /** Sets the calling thread's native audit context to {@link #context()}, if it changed. */
    static void update() {
        AuditContext.set(context());
    }

    /**
     * The audit context of the calling thread (see the class description), or null outside jobs
     * and tasks.
     *
     * @return the context, or null
     */
    static String context() {
        String job = CommonAuditContext.currentAuditContext().get(AuditConstants.PARAM_JOB_ID);
        if (SPARK == null) {
            return compose(job, null, null);
        }
        try {
            Object task = SPARK[0].invoke(null);
            if (task == null) {
                return compose(job, null, null);
            }
            String sql = (String) SPARK[5].invoke(task, "spark.sql.execution.id");
            String ids =
                    SPARK[1].invoke(task)
                            + "."
                            + SPARK[2].invoke(task)
                            + "."
                            + SPARK[3].invoke(task);
            return compose(job, sql, ids + " spark-tid/" + SPARK[4].invoke(task));
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return compose(job, null, null);
        }
    }

    /**
     * The context of a job id, a Spark SQL execution id and Spark task ids ({@code
     * <stage>.<partition>.<attempt> spark-tid/<id>}), each optional; ids are reduced to {@code
     * [A-Za-z0-9._:-]} ({@link AuditAgent#part}).
     *
     * @return the context, or null when all are null or blank
     */
    static String compose(String job, String sqlExecution, String sparkTask) {
        StringBuilder b = new StringBuilder();
        if (job != null && !job.isBlank()) {
            b.append("job/").append(AuditAgent.part(job.trim()));
        }
        if (sqlExecution != null && !sqlExecution.isBlank()) {
            b.append(b.length() == 0 ? "" : " ")
                    .append("spark-sql/")
                    .append(AuditAgent.part(sqlExecution.trim()));
        }
        if (sparkTask != null) {
            b.append(b.length() == 0 ? "" : " ").append("spark-task/").append(sparkTask);
        }
        return b.length() == 0 ? null : b.toString();
    }

    private static Method[] sparkMethods() {
        for (ClassLoader l :
                new ClassLoader[] {
                    TaskAudit.class.getClassLoader(), Thread.currentThread().getContextClassLoader()
                }) {
            if (l == null) {
                continue;
            }
            try {
                Class<?> c = Class.forName("org.apache.spark.TaskContext", false, l);
                return new Method[] {
                    c.getMethod("get"),
                    c.getMethod("stageId"),
                    c.getMethod("partitionId"),
                    c.getMethod("attemptNumber"),
                    c.getMethod("taskAttemptId"),
                    c.getMethod("getLocalProperty", String.class),
                };
            } catch (ClassNotFoundException | LinkageError | NoSuchMethodException e) {
                // not in Spark (or not through this loader)
            }
        }
        return null;
    }
}
