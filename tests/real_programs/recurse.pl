# Perl sample: a recursive sub, called in a loop forever.
use strict;
use warnings;
no warnings 'recursion';

sub f {
    my ($n) = @_;
    if ($n == 0) {
        my $s = 0;
        $s += $_ * $_ for 1 .. 200;
        return $s;
    }
    return f($n - 1) + 1;
}

my $sink = 0;
while (1) { $sink = ($sink + f(300)) % 1000003; }
