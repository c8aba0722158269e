-- clinic: small SQLite database for the lucid mini text-to-SQL benchmark (CC0).
PRAGMA foreign_keys = ON;

CREATE TABLE doctors (
    doctor_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    specialty TEXT NOT NULL,
    years_experience INTEGER,
    phone TEXT
);

CREATE TABLE patients (
    patient_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    gender TEXT,
    birth_date TEXT,
    city TEXT,
    insurance TEXT
);

CREATE TABLE appointments (
    appointment_id INTEGER PRIMARY KEY,
    patient_id INTEGER NOT NULL,
    doctor_id INTEGER NOT NULL,
    appointment_date TEXT NOT NULL,
    reason TEXT,
    fee REAL,
    status TEXT NOT NULL,
    FOREIGN KEY (patient_id) REFERENCES patients (patient_id),
    FOREIGN KEY (doctor_id) REFERENCES doctors (doctor_id)
);

INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (1, 'Dr. Helen Brooks', 'Cardiology', 22, '555-0101');
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (2, 'Dr. Rajesh Iyer', 'Pediatrics', 15, '555-0102');
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (3, 'Dr. Camille Dubois', 'Dermatology', 9, NULL);
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (4, 'Dr. Marcus Webb', 'Orthopedics', 18, '555-0104');
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (5, 'Dr. Yuki Tanaka', 'General Practice', 6, '555-0105');
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (6, 'Dr. Fatima Noor', 'Neurology', 12, NULL);
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (7, 'Dr. Peter Olsen', 'General Practice', 27, '555-0107');
INSERT INTO doctors (doctor_id, name, specialty, years_experience, phone) VALUES (8, 'Dr. Lucia Moretti', 'Pediatrics', 4, '555-0108');

INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (1, 'Alice Morgan', 'F', '1985-03-12', 'Springfield', 'BlueShield');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (2, 'Brian Lee', 'M', '1972-11-05', 'Riverton', 'Medicare');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (3, 'Carmen Ortiz', 'F', '1990-07-21', 'Springfield', NULL);
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (4, 'Derek Hughes', 'M', '2015-02-14', 'Lakeside', 'BlueShield');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (5, 'Esther Cohen', 'F', '1948-09-30', 'Riverton', 'Medicare');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (6, 'Frank Novak', 'M', '1963-04-18', 'Springfield', 'Aetna');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (7, 'Gina Russo', 'F', '2012-12-02', 'Lakeside', 'Aetna');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (8, 'Hassan Ali', 'M', '1995-06-09', 'Riverton', NULL);
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (9, 'Irene Papadopoulos', 'F', '1979-01-27', 'Springfield', 'BlueShield');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (10, 'Jacob Stein', 'M', '2018-08-15', 'Springfield', 'Aetna');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (11, 'Keisha Brown', 'F', '1988-10-10', 'Lakeside', 'BlueShield');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (12, 'Leo Martins', 'M', '1955-05-23', 'Riverton', 'Medicare');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (13, 'Maya Singh', 'F', '2001-03-03', 'Springfield', NULL);
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (14, 'Nathan Clark', 'M', '1969-07-07', 'Lakeside', 'Aetna');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (15, 'Olga Ivanova', 'F', '1940-12-24', 'Riverton', 'Medicare');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (16, 'Pablo Herrera', 'M', '2010-09-19', 'Springfield', 'BlueShield');
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (17, 'Quinn Foster', 'F', '1998-02-28', 'Lakeside', NULL);
INSERT INTO patients (patient_id, name, gender, birth_date, city, insurance) VALUES (18, 'Rosa Delgado', 'F', '1983-06-16', 'Riverton', 'Aetna');

INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (1, 2, 4, '2024-02-03', 'back pain', 180.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (2, 11, 5, '2024-02-03', 'blood test', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (3, 15, 4, '2024-02-05', 'back pain', 180.0, 'cancelled');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (4, 7, 8, '2024-02-08', 'annual checkup', 110.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (5, 7, 4, '2024-02-08', 'sprained ankle', 180.0, 'no-show');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (6, 16, 8, '2024-02-08', 'vaccination', 110.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (7, 18, 7, '2024-02-09', 'blood test', 90.0, 'no-show');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (8, 2, 6, '2024-02-12', 'numbness', 240.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (9, 6, 7, '2024-02-13', 'blood test', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (10, 4, 2, '2024-02-14', 'vaccination', 110.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (11, 4, 4, '2024-02-17', 'sprained ankle', 180.0, 'cancelled');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (12, 17, 7, '2024-02-21', 'annual checkup', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (13, 11, 6, '2024-02-24', 'migraine', 240.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (14, 12, 1, '2024-02-24', 'chest pain', 220.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (15, 13, 7, '2024-02-26', 'annual checkup', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (16, 13, 7, '2024-02-29', 'annual checkup', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (17, 13, 5, '2024-03-01', 'annual checkup', 90.0, 'no-show');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (18, 15, 5, '2024-03-01', 'blood test', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (19, 13, 3, '2024-03-07', 'mole check', 150.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (20, 14, 5, '2024-03-09', 'flu symptoms', 90.0, 'cancelled');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (21, 18, 6, '2024-03-12', 'migraine', 240.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (22, 18, 3, '2024-03-14', 'acne', 150.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (23, 16, 8, '2024-03-17', 'ear infection', 110.0, 'cancelled');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (24, 14, 7, '2024-03-18', 'blood test', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (25, 3, 6, '2024-03-19', 'dizziness', 240.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (26, 13, 1, '2024-03-21', 'chest pain', 220.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (27, 18, 5, '2024-03-21', 'flu symptoms', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (28, 5, 4, '2024-03-30', 'back pain', 180.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (29, 13, 1, '2024-03-30', 'palpitations', 220.0, 'no-show');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (30, 14, 7, '2024-04-04', 'blood test', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (31, 14, 5, '2024-04-04', 'annual checkup', 90.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (32, 7, 8, '2024-04-06', 'annual checkup', 110.0, 'cancelled');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (33, 17, 1, '2024-04-08', 'chest pain', 220.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (34, 3, 4, '2024-04-15', 'knee pain', 180.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (35, 5, 6, '2024-04-17', 'migraine', 240.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (36, 10, 2, '2024-04-20', 'vaccination', 110.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (37, 7, 2, '2024-04-21', 'annual checkup', 110.0, 'completed');
INSERT INTO appointments (appointment_id, patient_id, doctor_id, appointment_date, reason, fee, status) VALUES (38, 7, 8, '2024-04-27', 'vaccination', 110.0, 'completed');
