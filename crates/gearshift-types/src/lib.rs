//! Types shared by every Gearshift component (filled by the scheduler issue).
