// locals_cxx: C++ arguments and locals for swk-bt -full (issue 5).
//
// Chain (top->bottom), stopped by "break stop_here":
//   stop_here(code)
//   zoo::mix(a, b)                       [inline] always_inline, own locals
//   zoo::Ring<long, 3>::sum() const      template class, `this`, member array
//   zoo::Dog::speak(times, extra, counter)   virtual, `this`, const & and & params
//   zoo::visit<double>(scale, animal)    function template, a reference to a base
//   main
//
// Locals cover: a class with a base class and a vtable, references,
// enum class, bool, wchar_t/char16_t/char32_t, a lambda (closure object),
// static locals in a namespace function, pointers to members' data.
#include "swk_corpus.h"

volatile int swk_sink;

extern "C" SWK_FN int stop_here(int code)
{
    swk_sink += code;
    SWK_KEEP();
    return code + 1;
}

namespace zoo {

enum class Kind : unsigned char { Cat = 1, Dog = 2, Eel = 7 };

struct Tag {
    char code;
    short weight;
};

class Animal {
public:
    Animal(int legs, Kind kind, const char *name) : legs_(legs), kind_(kind), name_(name), tag_{'Z', 12} {}
    virtual ~Animal() {}
    virtual int speak(int times, const Tag &extra, int &counter);
    int legs() const { return legs_; }

protected:
    int legs_;
    Kind kind_;
    const char *name_;
    Tag tag_;
};

template <typename T, int N>
struct Ring {
    T items[N];
    int head;
    SWK_FN T sum() const;
};

static inline __attribute__((always_inline)) int mix(int a, int b)
{
    int prod = a * 3 + b;
    int got = 0;
    got += stop_here(prod);
    SWK_KEEP();
    return got + prod + a;
}

template <typename T, int N>
T Ring<T, N>::sum() const
{
    T acc = 0;
    for (int i = 0; i < N; i++)
        acc += items[i];
    int last = head + 5;
    T res = 0;
    res += mix(static_cast<int>(acc), last);
    SWK_KEEP();
    return res + acc + last;
}

class Dog : public Animal {
public:
    Dog() : Animal(4, Kind::Dog, "rex"), good_(true), tricks_{3, 1, 4} {}
    SWK_FN int speak(int times, const Tag &extra, int &counter) override;

private:
    bool good_;
    int tricks_[3];
};

int Animal::speak(int times, const Tag &extra, int &counter)
{
    counter += times + extra.code;
    return counter;
}

int Dog::speak(int times, const Tag &extra, int &counter)
{
    Ring<long, 3> ring = {{10, 20, 30}, 2};
    const Ring<long, 3> &rref = ring;
    Kind k = Kind::Eel;
    wchar_t wc = L'W';
    char16_t c16 = u'B';
    char32_t c32 = U'C';
    long got = 0;
    got += rref.sum();
    SWK_KEEP();
    counter += times;
    return (int)got + extra.weight + (k == Kind::Eel) + (int)wc + (int)c16 + (int)c32 + tricks_[1] + good_;
}

template <typename T>
SWK_FN T visit(T scale, Animal &animal)
{
    static int visits = 3;
    Tag tag = {'T', 77};
    int counter = 5;
    int base = 100;
    auto add = [base, &counter](int v) { return base + counter + v; };
    T result = 0;
    visits++;
    result += animal.speak(2, tag, counter);
    SWK_KEEP();
    return result * scale + add(1) + visits;
}

}  // namespace zoo

int main(int argc, char **)
{
    zoo::Dog dog;
    zoo::Animal &ref = dog;
    zoo::Animal *ptr = &dog;
    bool yes = argc > 0;
    double out = 0;
    out += zoo::visit<double>(1.5, ref);
    SWK_KEEP();
    return out > 0 && yes && ptr->legs() == 4 ? 0 : 1;
}
