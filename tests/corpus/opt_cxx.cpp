// opt_cxx: standard-library values GDB prints through libstdc++'s pretty-printers and
// LLDB through its data formatters.  stop_here <- use <- main.
// Stop: "break stop_here".
#include <map>
#include <string>
#include <vector>

volatile int sink;
__attribute__((noinline)) void stop_here(int v) { sink = v; }

struct Plain { int a; double b; };

__attribute__((noinline)) int use(const std::string &name, std::vector<int> nums, Plain plain)
{
    std::map<std::string, int> counts{{"one", 1}, {"two", 2}};
    std::string shout = name + "!";
    std::vector<std::string> words{"alpha", "beta"};
    stop_here((int)nums.size() + (int)counts.size() + (int)shout.size() + plain.a);
    return (int)shout.size() + (int)words.size();
}

int main()
{
    std::vector<int> nums{1, 2, 3};
    std::string name("hello");
    Plain plain{4, 0.5};
    return use(name, nums, plain) & 1;
}
