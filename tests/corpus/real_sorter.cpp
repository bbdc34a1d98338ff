// A C++ program whose stacks run through libstdc++ (std::sort, std::function,
// std::map, std::string, iostream): the real-program line comparison's C++ case.
#include <algorithm>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

static volatile unsigned long sink;

static std::string render(const std::map<std::string, int> &m)
{
    std::ostringstream out;
    for (const auto &kv : m)
        out << kv.first << '=' << kv.second << ';';
    return out.str();
}

static void round_of(std::vector<std::string> &words, const std::function<bool(const std::string &, const std::string &)> &less)
{
    std::sort(words.begin(), words.end(), less);
    std::map<std::string, int> counts;
    for (const auto &w : words)
        counts[w.substr(0, 3)]++;
    sink += render(counts).size();
}

int main()
{
    std::vector<std::string> words;
    for (unsigned i = 0; i < 20000; i++)
        words.push_back(std::to_string((i * 2654435761u) % 1000003u) + "-word");
    for (;;) {
        round_of(words, [](const std::string &a, const std::string &b) { return a.size() != b.size() ? a.size() < b.size() : a > b; });
        std::reverse(words.begin(), words.end());
    }
}
