-- Schema of the tuned blog for MariaDB (and MySQL): the reference schema plus one index on comment.
CREATE TABLE article (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  title VARCHAR(128) NOT NULL,
  body VARCHAR(4096) NOT NULL,
  created_at DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE comment (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  article_id INT NOT NULL,
  name VARCHAR(64) NOT NULL DEFAULT '',
  body VARCHAR(1024) NOT NULL,
  created_at DATETIME NOT NULL,
  INDEX comment_article_id (article_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
