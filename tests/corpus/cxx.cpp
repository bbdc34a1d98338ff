// cxx: C++ names.  Chain (top->bottom):
//   stop_here
//   (anonymous namespace)::anon_leaf
//   a lambda inside geo::Vec::operator+  (gdb: "...::{lambda(int)#1}::operator()")
//   geo::Vec::operator+
//   shapes::Square<int>::area          (virtual, called through shapes::Shape*)
//   app::Runner<long>::run
//   main
#include "swk_corpus.h"

volatile int swk_sink;

extern "C" SWK_FN int stop_here(int x)
{
    swk_sink += x;
    SWK_KEEP();
    return x + 1;
}

namespace {
SWK_FN int anon_leaf(int x)
{
    int r = stop_here(x + 1);
    SWK_KEEP();
    return r + 1;
}
} // namespace

namespace geo {
struct Vec {
    int x, y;
    SWK_FN Vec operator+(const Vec &o) const
    {
        auto f = [this](int k) __attribute__((noipa, noinline)) -> int {
            int r = anon_leaf(k + x);
            SWK_KEEP();
            return r + 1;
        };
        int r = f(o.x);
        SWK_KEEP();
        return Vec{x + o.x + r, y + o.y};
    }
};
} // namespace geo

namespace shapes {
struct Shape {
    virtual int area(int k) const = 0;
    virtual ~Shape() {}
};

template <typename T>
struct Square : Shape {
    T side;
    explicit Square(T s) : side(s) {}
    SWK_FN int area(int k) const override
    {
        geo::Vec v{static_cast<int>(side), k};
        geo::Vec w = v + geo::Vec{k, 1};
        SWK_KEEP();
        return w.x + w.y;
    }
};

struct Circle : Shape {
    SWK_FN int area(int k) const override { return k * 3; }
};

// Hidden from the optimiser so the virtual call can't be devirtualised.
SWK_FN Shape *make_shape(int which)
{
    static Square<int> sq(3);
    static Circle ci;
    if (which)
        return &sq;
    return &ci;
}
} // namespace shapes

namespace app {
template <typename T>
struct Runner {
    T base;
    SWK_FN int run(const shapes::Shape *s) const
    {
        int r = s->area(static_cast<int>(base));
        SWK_KEEP();
        return r + 1;
    }
};
} // namespace app

int main(int argc, char **)
{
    app::Runner<long> runner{argc};
    int r = runner.run(shapes::make_shape(argc));
    SWK_KEEP();
    return r == 0 ? 1 : 0;
}
