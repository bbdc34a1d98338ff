/* JitRecurse (tests/test_jit_java.py): down(N) recurses N levels after a warm-up that has
 * HotSpot compile it, then, at the bottom, writes its own stack (Thread.getStackTrace: the Java
 * frames, innermost first) to the file -Drecord= names and sleeps.  Run with
 * -XX:+PreserveFramePointer (compiled frames keep rbp) and -XX:-Inline (one physical frame per
 * Java call, so the record counts them). */
import java.nio.file.*;
public class JitRecurse {
    static volatile int sink;
    static int down(int n, boolean park) throws Exception {
        if (n == 0) {
            if (park) {
                StringBuilder sb = new StringBuilder();
                for (StackTraceElement e : Thread.currentThread().getStackTrace()) sb.append(e.getClassName()).append(".").append(e.getMethodName()).append("\n");
                Files.writeString(Path.of(System.getProperty("record")), sb.toString());
                Thread.sleep(1000000);
            }
            return 0;
        }
        return down(n - 1, park) + 1;
    }
    public static void main(String[] a) throws Exception {
        for (int i = 0; i < 30000; i++) sink += down(20, false);
        down(Integer.parseInt(a[0]), true);
    }
}
