-- school: small SQLite database for the lucid mini text-to-SQL benchmark (CC0).
PRAGMA foreign_keys = ON;

CREATE TABLE teachers (
    teacher_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    department TEXT,
    hire_date TEXT,
    email TEXT
);

CREATE TABLE courses (
    course_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    department TEXT,
    credits INTEGER,
    teacher_id INTEGER,
    FOREIGN KEY (teacher_id) REFERENCES teachers (teacher_id)
);

CREATE TABLE students (
    student_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    grade_level INTEGER,
    birth_date TEXT,
    city TEXT
);

CREATE TABLE enrollments (
    student_id INTEGER NOT NULL,
    course_id INTEGER NOT NULL,
    semester TEXT NOT NULL,
    score REAL,
    PRIMARY KEY (student_id, course_id, semester),
    FOREIGN KEY (student_id) REFERENCES students (student_id),
    FOREIGN KEY (course_id) REFERENCES courses (course_id)
);

INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (1, 'Margaret Chen', 'Mathematics', '2010-08-20', 'm.chen@school.example.org');
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (2, 'Robert Hayes', 'Science', '2015-08-18', 'r.hayes@school.example.org');
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (3, 'Elena Petrova', 'English', '2018-01-08', NULL);
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (4, 'Samuel Adeyemi', 'History', '2012-08-22', 's.adeyemi@school.example.org');
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (5, 'Julia Fernandes', 'Art', '2020-08-17', NULL);
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (6, 'William Park', 'Science', '2008-08-25', 'w.park@school.example.org');
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (7, 'Nadia Haddad', 'Mathematics', '2021-08-16', 'n.haddad@school.example.org');
INSERT INTO teachers (teacher_id, name, department, hire_date, email) VALUES (8, 'Thomas Green', 'Physical Education', '2016-08-19', NULL);

INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (1, 'Algebra II', 'Mathematics', 4, 1);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (2, 'Calculus', 'Mathematics', 5, 7);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (3, 'Biology', 'Science', 4, 2);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (4, 'Chemistry', 'Science', 4, 6);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (5, 'Physics', 'Science', 5, 6);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (6, 'American Literature', 'English', 3, 3);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (7, 'Creative Writing', 'English', 2, 3);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (8, 'World History', 'History', 3, 4);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (9, 'Studio Art', 'Art', 2, 5);
INSERT INTO courses (course_id, title, department, credits, teacher_id) VALUES (10, 'Statistics', 'Mathematics', 3, NULL);

INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (1, 'Ava Thompson', 10, '2008-04-12', 'Springfield');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (2, 'Ben Carter', 11, '2007-09-30', 'Riverton');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (3, 'Chloe Nguyen', 9, '2009-01-22', 'Springfield');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (4, 'Diego Ramirez', 12, '2006-06-05', 'Lakeside');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (5, 'Ella Fitzgerald', 10, '2008-11-17', 'Riverton');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (6, 'Farah Siddiqui', 11, '2007-03-08', 'Springfield');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (7, 'Gabriel Silva', 12, '2006-12-19', 'Lakeside');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (8, 'Hana Yamamoto', 9, '2009-07-03', 'Riverton');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (9, 'Isaac Levi', 10, '2008-02-25', 'Springfield');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (10, 'Jade Morgan', 11, '2007-10-14', NULL);
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (11, 'Kofi Mensah', 12, '2006-08-29', 'Lakeside');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (12, 'Lily Zhang', 9, '2009-05-11', 'Springfield');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (13, 'Mateo Rossi', 10, '2008-09-01', 'Riverton');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (14, 'Nora Lindgren', 11, '2007-01-27', 'Lakeside');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (15, 'Owen Murphy', 12, '2006-03-16', 'Springfield');
INSERT INTO students (student_id, name, grade_level, birth_date, city) VALUES (16, 'Priya Shah', 10, '2008-12-08', 'Riverton');

INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (1, 4, '2023-Fall', 68.0);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (1, 6, '2024-Spring', 60.2);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (1, 8, '2024-Spring', 79.5);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (1, 9, '2024-Spring', NULL);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (2, 2, '2023-Fall', 80.3);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (2, 5, '2024-Spring', 98.9);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (2, 6, '2024-Spring', NULL);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (2, 7, '2024-Spring', 64.2);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (3, 7, '2024-Spring', 60.7);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (3, 8, '2023-Fall', 89.3);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (4, 1, '2024-Spring', 76.5);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (4, 3, '2023-Fall', 94.0);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (4, 4, '2024-Spring', 73.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (4, 9, '2023-Fall', 82.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (4, 10, '2023-Fall', 68.4);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (5, 1, '2023-Fall', 72.7);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (5, 4, '2024-Spring', 90.2);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (5, 8, '2023-Fall', NULL);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (6, 8, '2023-Fall', 73.7);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (7, 9, '2024-Spring', 88.4);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (8, 6, '2024-Spring', 60.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (8, 9, '2023-Fall', NULL);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (9, 1, '2023-Fall', 83.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (9, 7, '2023-Fall', 89.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (9, 9, '2024-Spring', 95.0);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (10, 3, '2023-Fall', 81.2);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (10, 6, '2023-Fall', 72.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (11, 7, '2024-Spring', 62.9);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (12, 1, '2023-Fall', 77.0);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (12, 2, '2023-Fall', 70.9);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (13, 5, '2023-Fall', 92.1);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (13, 9, '2023-Fall', 66.0);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (14, 2, '2023-Fall', 69.9);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (15, 3, '2024-Spring', NULL);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (15, 4, '2024-Spring', 94.5);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (15, 9, '2024-Spring', 96.8);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (15, 10, '2023-Fall', 73.9);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (16, 2, '2024-Spring', 85.4);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (16, 3, '2023-Fall', 97.2);
INSERT INTO enrollments (student_id, course_id, semester, score) VALUES (16, 4, '2024-Spring', 98.5);
