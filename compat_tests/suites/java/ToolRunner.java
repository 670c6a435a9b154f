// Runs Kafka's command-line tools one after the other in one JVM, as Kafka's own tests do, so the
// compat tests pay the JVM's start-up once rather than per command.
//
// Each line on stdin is one invocation: the tool's main class, then its arguments, separated by
// tabs. The tool's System.out and System.err are captured, and Exit.exit()/halt() end the tool
// instead of the JVM: the first call sets the exit status and, as the end of a real JVM would,
// discards whatever the tool prints after it (a tool may catch the unwinding exception); then
// "@@result <exit status> <stdout bytes> <stderr bytes>" and the two outputs are written to
// stdout. compat_tests/suites/jvm.py (ToolJvm) drives it.

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

public final class ToolRunner {
    private static final class ToolExit extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int status;

        ToolExit(int status) {
            super(null, null, false, false);
            this.status = status;
        }
    }

    private static final PrintStream DISCARD = new PrintStream(OutputStream.nullOutputStream());
    private static volatile Integer exitStatus;

    private static void exit(int status) {
        if (exitStatus == null) {
            exitStatus = status;
            System.out.flush();
            System.err.flush();
            System.setOut(DISCARD);
            System.setErr(DISCARD);
        }
        throw new ToolExit(status);
    }

    // Kafka's Exit hook: org.apache.kafka.common.utils.Exit up to 3.9, ...utils.internals.Exit
    // since 4.x; found by name so the same class runs with either client line.
    private static void hookExit() throws ReflectiveOperationException {
        Class<?> exitClass;
        try {
            exitClass = Class.forName("org.apache.kafka.common.utils.internals.Exit");
        } catch (ClassNotFoundException e) {
            exitClass = Class.forName("org.apache.kafka.common.utils.Exit");
        }
        String name = exitClass.getName();
        Class<?> procedure = Class.forName(name + "$Procedure");
        Class<?> hookAdder = Class.forName(name + "$ShutdownHookAdder");
        Object exitProcedure = Proxy.newProxyInstance(
            procedure.getClassLoader(), new Class<?>[] {procedure}, (proxy, method, args) -> {
                if (method.getDeclaringClass() == Object.class) {
                    return objectMethod(proxy, method, args);
                }
                exit((Integer) args[0]);
                return null;
            });
        Object noHooks = Proxy.newProxyInstance(
            hookAdder.getClassLoader(), new Class<?>[] {hookAdder}, (proxy, method, args) ->
                method.getDeclaringClass() == Object.class ? objectMethod(proxy, method, args)
                                                           : null);
        for (String setter : new String[] {"setExitProcedure", "setHaltProcedure"}) {
            Method m = exitClass.getMethod(setter, procedure);
            m.invoke(null, exitProcedure);
        }
        exitClass.getMethod("setShutdownHookAdder", hookAdder).invoke(null, noHooks);
    }

    private static Object objectMethod(Object proxy, Method method, Object[] args) {
        switch (method.getName()) {
            case "equals": return proxy == args[0];
            case "hashCode": return System.identityHashCode(proxy);
            default: return "ToolRunner's exit hook";
        }
    }

    public static void main(String[] ignored) throws Exception {
        PrintStream out = System.out;
        PrintStream err = System.err;
        hookExit();
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            ByteArrayOutputStream toolOut = new ByteArrayOutputStream();
            ByteArrayOutputStream toolErr = new ByteArrayOutputStream();
            PrintStream capturedOut = new PrintStream(toolOut, true, StandardCharsets.UTF_8);
            PrintStream capturedErr = new PrintStream(toolErr, true, StandardCharsets.UTF_8);
            System.setOut(capturedOut);
            System.setErr(capturedErr);
            exitStatus = null;
            int status = 0;
            try {
                Class.forName(parts[0]).getMethod("main", String[].class)
                    .invoke(null, (Object) Arrays.copyOfRange(parts, 1, parts.length));
            } catch (InvocationTargetException e) {
                if (e.getCause() instanceof ToolExit exit) {
                    status = exit.status;
                } else {
                    e.getCause().printStackTrace(capturedErr);
                    status = 1;
                }
            } catch (ToolExit exit) {
                status = exit.status;
            } catch (ReflectiveOperationException e) {
                e.printStackTrace(capturedErr);
                status = 1;
            } finally {
                capturedOut.flush();
                capturedErr.flush();
                System.setOut(out);
                System.setErr(err);
            }
            if (exitStatus != null) {
                status = exitStatus;
            }
            byte[] o = toolOut.toByteArray();
            byte[] e = toolErr.toByteArray();
            out.print("@@result " + status + " " + o.length + " " + e.length + "\n");
            out.write(o);
            out.write(e);
            out.flush();
        }
    }
}
